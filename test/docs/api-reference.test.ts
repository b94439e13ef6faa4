// Every name the package exports carries a doc comment with a usage line (`@example`): the API
// reference is generated from them (`npm run docs`), and an editor shows them on hover.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { entryPoints } from '../support/entry-points.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const entries = Object.values(entryPoints);

function exportsWithoutExample(): string[] {
  const program = ts.createProgram(entries.map((e) => `${root}/${e}`), { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const missing: string[] = [];
  for (const entry of entries) {
    const file = program.getSourceFile(`${root}/${entry}`)!;
    for (const exported of checker.getExportsOfModule(checker.getSymbolAtLocation(file)!)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const documented = (symbol.declarations ?? []).some((declaration) => {
        const tags = ts.getJSDocTags(declaration);
        const hasText = ts.getJSDocCommentsAndTags(declaration).length > 0;
        return hasText && tags.some((tag) => tag.tagName.text === 'example');
      });
      if (!documented) missing.push(`${entry}: ${exported.name}`);
    }
  }
  return [...new Set(missing)];
}

describe('the API reference', () => {
  it('has a doc comment with an @example for every name an entry point exports', () => {
    expect(exportsWithoutExample()).toEqual([]);
  }, 60_000);
});

describe('npm run docs', () => {
  // Built once, into a temporary folder: HTML (so the guides' links are checked, which happens
  // as pages are written) and the JSON model the checks below read.
  let built: Promise<{ output: string; model: ReflectionModel }> | undefined;
  const build = () => (built ??= (async () => {
    const out = mkdtempSync(join(tmpdir(), 'koagent-api-'));
    try {
      const typedoc = fileURLToPath(new URL('../../node_modules/typedoc/bin/typedoc', import.meta.url));
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [typedoc, '--out', join(out, 'html'), '--json', join(out, 'api.json')], { cwd: root });
      return { output: `${stdout}${stderr}`, model: JSON.parse(readFileSync(join(out, 'api.json'), 'utf8')) as ReflectionModel };
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  })());

  it('builds the API reference with no warning (TypeDoc treats warnings as errors), the guides\' links included', async () => {
    expect((await build()).output).not.toMatch(/warning|error/i);
  }, 180_000);

  it('names each module as users import it, with the README as its landing page and the guides as documents', async () => {
    const { model } = await build();
    expect(model.children.map((m) => m.name).sort()).toEqual(Object.keys(entryPoints).sort());
    expect(JSON.stringify(model.readme)).toContain('koagent is a TypeScript runtime');
    expect(model.documents?.map((d) => d.name)).toEqual(expect.arrayContaining(['durable-runs', 'testing', 'providers', 'streaming']));
  }, 180_000);

  it('puts every name of the root in a category (agent, tools, middleware, stores, providers …), the dialects under hooks, none left over', async () => {
    const { model } = await build();
    const root = model.children.find((m) => m.name === 'koagent')!;
    expect(root.categories.map((c) => c.title)).toEqual(expect.arrayContaining(['Agent', 'Tools', 'Middleware', 'Stores', 'Providers']));
    expect(model.children.find((m) => m.name === 'koagent/hooks')!.categories.map((c) => c.title)).toEqual(['Hooks']);
    const uncategorised = model.children.flatMap((m) => m.categories?.filter((c) => c.title === 'Other').map(() => m.name) ?? []);
    expect(uncategorised).toEqual([]);
    expect(model.children.find((m) => m.name === 'koagent/testing')!.categories.map((c) => c.title)).toEqual(['Testing']);
  }, 180_000);
});

/** The part of TypeDoc's JSON model these checks read. */
interface ReflectionModel {
  readme?: unknown;
  documents?: { name: string }[];
  children: { name: string; categories: { title: string }[] }[];
}
