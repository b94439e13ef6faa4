// The page's bundle: what `npm run build` ships (the same Vite build the server makes on demand
// from the sources) is an HTML file with one script and one stylesheet beside it, all reached by
// relative URLs, with nothing fetched from elsewhere.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/index.js';
import { buildPage } from '../../src/studio/assets.js';
import { startStudio } from '../../src/studio/server.js';

const out = join(mkdtempSync(join(tmpdir(), 'koagent-studio-page-')), 'assets');
afterAll(() => rmSync(join(out, '..'), { recursive: true, force: true }));

describe('the page bundle', () => {
  it('is index.html with one script and one stylesheet, by relative URLs, loading nothing from elsewhere', async () => {
    await buildPage(out);
    const files = readdirSync(join(out, 'assets'));
    expect(files.filter((f) => f.endsWith('.js'))).toHaveLength(1);
    expect(files.filter((f) => f.endsWith('.css'))).toHaveLength(1);
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect([...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).every((url) => url!.startsWith('./assets/'))).toBe(true);
    // The script names XML namespaces (as any DOM library does) and no other address.
    const script = readFileSync(join(out, 'assets', files.find((f) => f.endsWith('.js'))!), 'utf8');
    expect([...new Set([...script.matchAll(/https?:\/\/[a-z0-9.-]+/gi)].map((m) => m[0]))].filter((origin) => origin !== 'http://www.w3.org')).toEqual([]);
  }, 60_000);

  it('is served from the folder the studio is pointed at, without the token, and a path out of it is refused', async () => {
    const studio = await startStudio({ store: memoryStore(), assetsDir: out });
    try {
      const html = await (await fetch(new URL('/', studio.url))).text();
      const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]!;
      const response = await fetch(new URL(`/${script}`, studio.url));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/javascript');
      // Sent as written (fetch would normalise it): an encoded slash that climbs out of the folder.
      writeFileSync(join(out, '..', 'secret.txt'), 'not for the page');
      const status = await new Promise<number>((resolve, reject) => {
        request(new URL('/..%2fsecret.txt', studio.url), (res) => (res.resume(), resolve(res.statusCode!))).on('error', reject).end();
      });
      expect(status).toBe(404);
    } finally {
      await studio.close();
    }
  }, 60_000);
});
