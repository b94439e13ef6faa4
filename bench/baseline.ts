// The commit a redesign is measured against: its src/ is taken from git and compiled beside this
// one, so the bench runs both in one process, interleaved, on the same machine at the same time.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The last commit before the one-way onion (compose with one kind of layer, the tool call record, declared seams). */
export const BEFORE_ONE_WAY_ONION = '85c164627dd6f5acd0b93ea32cf60673f094f115';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The package root of `commit` (`BENCH_BASE` overrides it), compiled once into .bench/base-<commit>; undefined, saying why, when git cannot give it. */
export async function baseline(commit = process.env.BENCH_BASE ?? BEFORE_ONE_WAY_ONION): Promise<typeof import('../src/index.js') | undefined> {
  const dir = join(root, '.bench', `base-${commit.slice(0, 12)}`);
  const entry = join(dir, 'out', 'src', 'index.js');
  if (!existsSync(entry)) {
    try {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      // The commit's sources, and a tsconfig that compiles them beside this checkout's node_modules.
      execFileSync('sh', ['-c', `git -C "${root}" archive ${commit} src tsconfig.json | tar -x -C "${dir}"`], { stdio: ['ignore', 'ignore', 'pipe'] });
      writeFileSync(join(dir, 'tsconfig.base.json'), JSON.stringify({ extends: './tsconfig.json', compilerOptions: { rootDir: '.', outDir: 'out', noEmit: false, declaration: false, sourceMap: false, skipLibCheck: true }, include: ['src'], exclude: ['src/studio/page'] }));
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.base.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
      // Its imports of dependencies resolve from this checkout's node_modules, one level up.
      writeFileSync(join(dir, 'out', 'package.json'), JSON.stringify({ type: 'module' }));
    } catch (error) {
      console.log(`(no baseline: commit ${commit.slice(0, 12)} could not be built here: ${(error as Error).message.split('\n')[0]})`);
      return undefined;
    }
  }
  return (await import(pathToFileURL(entry).href)) as typeof import('../src/index.js');
}
