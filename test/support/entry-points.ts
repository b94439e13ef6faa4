// The package's entry points, read from package.json's `exports`: each name a user imports
// (`koagent`, `koagent/testing`, …) with the source file that entry point is built from.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { name: string; exports: Record<string, string | { default: string }> };

/** Import name → source path from the project's root, e.g. `koagent/testing` → `src/testing/index.ts`. */
export const entryPoints: Record<string, string> = Object.fromEntries(
  Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === 'object')
    .map(([subpath, target]) => [subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`, (target as { default: string }).default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')]),
);
