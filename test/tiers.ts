// The suite's two tiers, in one place. The unit tier is every test file under test/ but those
// listed here: each runs in the one process vitest gives it, with no second process, no database
// server, no compiler and no browser (`npm run test:unit`, under a minute). The integration tier
// is the files listed, each with what it needs. `npm test` runs both.
//
// The rule is checked both ways. In the unit tier, node:child_process starts nothing: a test that
// tries fails, naming this file (test/support/unit-tier.ts). test/test-hygiene.test.ts checks
// that no file of the unit tier imports a compiler, a browser driver or PostgreSQL, and that each
// entry here names at least one file. So a new test that needs more than its own process goes in
// a file named `*-processes.test.ts` beside the module it tests, or in a file listed here.

/** The test files of the integration tier (globs from the project's root), each with what it needs. */
export const integrationTests: Readonly<Record<string, string>> = {
  'test/**/*-processes.test.ts': 'another Node process: a child that resumes a run, shares a file, serves over stdio or must exit by itself',
  'test/examples/**/*.test.ts': 'runs each example as users do, in a Node process of its own',
  'test/cli/**/*.test.ts': 'runs the koagent command in a process of its own',
  'test/worker/**/*.test.ts': 'workers and clients on a real PostgreSQL server, some workers in processes of their own',
  'test/evals/junit-xml.test.ts': "the report's JUnit XML parsed back by Chromium's XML parser",
  'test/evals/workers.test.ts': 'an evaluation run by workers on a real PostgreSQL server',
  'test/mcp/client.test.ts': 'real MCP servers over stdio, each a process of its own',
  'test/mcp/connection.test.ts': 'real MCP servers over stdio, killed and started again',
  'test/mcp/limits.test.ts': 'an MCP server over stdio that breaks the protocol on purpose',
  'test/mcp/resume.test.ts': 'another Node process resumes a run that calls an MCP server',
  'test/stores/postgres.test.ts': 'a real PostgreSQL server',
  'test/stores/step-cost-postgres.test.ts': 'a real PostgreSQL server, its statistics read',
  'test/stores/chaos.test.ts': 'worker processes killed at random on SQLite and PostgreSQL',
  'test/durable/in-place-edits.test.ts': 'a worker process killed mid-run, on SQLite and PostgreSQL',
  'test/durable/event-log-kill.test.ts': 'worker processes SIGKILLed mid-stream on SQLite and PostgreSQL while this one follows the log',
  'test/http/workers.test.ts': 'the HTTP handler beside workers on a real PostgreSQL, a worker process SIGKILLed',
  'test/http/kill.test.ts': 'worker processes SIGKILLed while a client follows over HTTP, on SQLite and PostgreSQL',
  'test/studio/page.test.ts': 'the studio page in Chromium',
  'test/studio/playground.test.ts': "the studio's playground in Chromium",
  'test/studio/lab-page.test.ts': "the studio page's forks, replays and evaluations in Chromium",
  'test/docs/snippets.test.ts': "the compiler checks the manual's code blocks; a child process runs them",
  'test/docs/api-reference.test.ts': 'the compiler reads the doc comments; TypeDoc builds the reference in a process of its own',
  'test/exports.test.ts': "the compiler's type checker lists what each entry point exports",
  'test/packaging.test.ts': 'npm packs the package; the compiler builds a program against it',
  'test/types/zod-range.test.ts': 'the compiler checks the sources against the lowest zod supported',
};

/** The integration tests that run last, one file at a time (see vitest.config.ts). */
export const workerTests: readonly string[] = ['test/worker/**/*.test.ts', 'test/examples/workers.test.ts', 'test/http/workers.test.ts', 'test/http/kill.test.ts', 'test/evals/workers.test.ts'];
