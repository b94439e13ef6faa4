// What the published package holds: a licence, where its sources live, source maps that carry
// their sources (so a stack trace points into code the tarball has), and declarations that give
// a program importing the root every field of a middleware, the ones features declare included.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = mkdtempSync(join(tmpdir(), 'koagent-build-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the package', () => {
  it('ships the MIT licence its package.json names, and says where its repository is', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(pkg.files).toContain('LICENSE');
    expect(pkg.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/\.git$/) });
  });

  it('builds source maps that carry the sources they map', async () => {
    const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
    await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', out], { cwd: root });
    const map = JSON.parse(readFileSync(join(out, 'core', 'stacks', 'compose.js.map'), 'utf8'));
    expect(map.sourcesContent?.[0]).toContain('export function compose');
    expect(existsSync(join(out, 'index.d.ts'))).toBe(true);
  }, 120_000);

  it('declares, for a program that imports only the root, the middleware fields features add (holdStream, scope)', () => {
    // Beside the built declarations, which find their dependencies through this link.
    symlinkSync(join(root, 'node_modules'), join(out, 'node_modules'), 'dir');
    const file = join(out, 'consumer.mts');
    writeFileSync(file, [
      "import { defineMiddleware, type Middleware } from './index.js';",
      "export const held: Middleware = { name: 'redact', holdStream: true, scope: 'lead-only', model: (_ctx, next) => next() };",
      "export const defined = defineMiddleware({ scope: 'inherit', rawCalls: true, tool: (_ctx, next) => next() });",
      "// @ts-expect-error a scope is 'inherit' or 'lead-only'",
      "export const misnamed: Middleware = { scope: 'everywhere' };",
    ].join('\n'));
    const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true, types: [] });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps built tarballs out of git', () => {
    expect(readFileSync(join(root, '.gitignore'), 'utf8').split('\n')).toContain('*.tgz');
  });
});
