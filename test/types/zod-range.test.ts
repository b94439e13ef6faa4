// zod is the user's: a peer dependency with the range ^4.0.0, so a project has one copy of it.
// The project's own typecheck runs against the newest zod it pins; this one compiles the sources
// and the type tests against the lowest supported release (4.0.0, installed as zod-lowest).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the supported zod versions', () => {
  it('zod is a peer dependency whose range takes both the lowest and the newest supported 4.x', () => {
    const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
    expect(pkg.dependencies?.zod).toBeUndefined();
    expect(pkg.peerDependencies.zod).toBe('^4.0.0');
    expect(JSON.parse(readFileSync(`${root}/node_modules/zod-lowest/package.json`, 'utf8')).version).toBe('4.0.0');
  });

  it('the sources and the type tests compile against zod 4.0.0', async () => {
    const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
    const run = await promisify(execFile)(process.execPath, [tsc, '-p', 'test/types/tsconfig.zod-lowest.json'], { cwd: root }).catch((error: { stdout: string }) => error);
    expect(run.stdout).toBe('');
  }, 120_000);
});
