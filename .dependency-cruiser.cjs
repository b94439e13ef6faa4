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
      to: { path: '^src/(index|hooks)\\.ts$' },
    },
    {
      name: 'mcp-is-an-entry-point',
      comment: 'koagent/mcp (src/mcp) builds on the public API, defineTool, JSON Schema inputs, toolsets and the agent type; nothing else of koagent imports it.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/', pathNot: ['^src/mcp/', '^src/api\\.ts$', '^src/tools/(define|json-schema-input|toolset)\\.ts$', '^src/agent/agent\\.ts$'] },
    },
    {
      name: 'only-mcp-knows-mcp',
      comment: 'Nothing outside src/mcp imports it, the MCP SDK or Ajv: they are optional peers of koagent/mcp alone.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/mcp/' },
      to: { path: ['^src/mcp/', '^node_modules/(@modelcontextprotocol|ajv|ajv-formats)/'] },
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
