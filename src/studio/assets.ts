// The page's files. A built package ships them beside this module (`npm run build` bundles
// src/studio/page with Vite into dist/studio/assets). Run from the sources (a clone: tests, the
// demo), there is no bundle beside it, so the first request builds one with Vite — a dev
// dependency a clone has — into node_modules/.cache, under a hash of the page's sources: a later
// run with the same sources reuses it, and a changed page is built again.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The page's source folder and Vite config (in a clone). */
export const PAGE_SOURCES = join(here, 'page');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : [join(dir, entry.name)])).sort();
}

/** A hash of the page's sources (and the types they import), naming its cached build. */
function sourcesHash(): string {
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(PAGE_SOURCES), join(here, 'trace-types.ts')]) hash.update(file.slice(here.length)).update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

let building: Promise<string> | undefined;

/**
 * The folder the page is served from: the shipped bundle, or (from the sources) one built now.
 *
 * @example const dir = await studioAssets(); // holds index.html and assets/
 */
export function studioAssets(): Promise<string> {
  const shipped = join(here, 'assets');
  if (existsSync(join(shipped, 'index.html'))) return Promise.resolve(shipped);
  building ??= buildCached().catch((error: unknown) => {
    building = undefined; // the next request tries again
    throw error;
  });
  return building;
}

async function buildCached(): Promise<string> {
  if (!existsSync(join(PAGE_SOURCES, 'vite.config.ts'))) throw new Error(`the studio's page is not built (no ${join(here, 'assets')}); build the package with npm run build`);
  const cache = join(here, '..', '..', 'node_modules', '.cache', 'koagent-studio');
  const out = join(cache, sourcesHash());
  if (existsSync(join(out, 'index.html'))) return out;
  mkdirSync(cache, { recursive: true });
  // Built aside and renamed into place: processes building at once never serve a half-written folder.
  const draft = `${out}.${process.pid}.${Date.now()}`;
  await buildPage(draft);
  try {
    renameSync(draft, out);
  } catch (error) {
    if (!existsSync(join(out, 'index.html'))) throw error;
    rmSync(draft, { recursive: true, force: true }); // another process got there first
  }
  return out;
}

/**
 * Bundle the page into `outDir` with Vite and the page's own config.
 *
 * @example await buildPage('dist/studio/assets');
 */
export async function buildPage(outDir: string): Promise<void> {
  const specifier = 'vite';
  const vite = (await import(specifier)) as typeof import('vite');
  await vite.build({ configFile: join(PAGE_SOURCES, 'vite.config.ts'), build: { outDir, emptyOutDir: true }, logLevel: 'warn' });
}
