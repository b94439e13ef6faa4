// The studio page's bundle: `npm run build` writes it to dist/studio/assets (shipped in the
// package); run from the sources, the studio server builds it on demand into node_modules/.cache
// with this same config (src/studio/assets.ts). Relative URLs, so the page works under any path.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../../dist/studio/assets', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // One script and one stylesheet, no source maps: the package stays small.
    sourcemap: false,
    chunkSizeWarningLimit: 200,
  },
});
