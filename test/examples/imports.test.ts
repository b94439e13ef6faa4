// The examples are written as users write their code: they import koagent by the names the
// package publishes (`koagent`, `koagent/testing`, …), so a copy of one runs against the
// installed package. In this repository those names resolve to the sources through tsconfig's
// `paths` (read by tsc, tsx and vitest), which must map each entry point to its own source.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { entryPoints } from '../support/entry-points.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function examples(dir = join(root, 'examples')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? examples(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const specifiers = (file: string) => [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);

describe('the examples import koagent as users do', () => {
  it('name koagent and its subpaths, never a file of src/ or test/', () => {
    const reaching = examples().flatMap((file) => specifiers(file).filter((s) => s.startsWith('.') && !s.startsWith('./')).map((s) => `${relative(root, file)}: ${s}`));
    expect(reaching).toEqual([]);
  });

  it('use only entry points the package exports', () => {
    const named = new Set(examples().flatMap(specifiers).filter((s) => s === 'koagent' || s.startsWith('koagent/')));
    expect([...named].filter((s) => !(s in entryPoints))).toEqual([]);
    expect(named.size).toBeGreaterThan(3);
  });
});

describe('tsconfig paths', () => {
  it('map every entry point of package.json to the source it is built from, and nothing else', () => {
    // tsconfig.json may hold comments, as TypeScript allows: read it as TypeScript does.
    const tsconfig = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config as { compilerOptions: { paths: Record<string, string[]> } };
    const paths = Object.fromEntries(Object.entries(tsconfig.compilerOptions.paths).map(([name, [target]]) => [name, target!.replace(/^\.\//, '')]));
    expect(paths).toEqual(entryPoints);
  });
});
