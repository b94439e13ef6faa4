// The unit tier's setup (vitest.config.ts): no test in it may start a process. Each way
// node:child_process has of starting one throws instead, naming the rule, so a test that needs a
// second process (a child, PostgreSQL, a browser, the compiler's command) fails at once in
// `npm test` until its file is listed in the integration tier (test/tiers.ts).
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

const starters = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

for (const name of starters) {
  (childProcess as unknown as Record<string, unknown>)[name] = () => {
    throw new Error(`child_process.${name}(): a test of the unit tier starts no process. A test that needs one (a child, PostgreSQL, a browser, a compiler) belongs to the integration tier: move it to a file listed in test/tiers.ts (or list its file there, saying what it needs).`);
  };
}
// `import { spawn } from 'node:child_process'` reads the same functions as the default export.
syncBuiltinESMExports();
