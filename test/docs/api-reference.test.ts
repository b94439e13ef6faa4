// Every name the package exports carries a doc comment with a usage line (`@example`): the API
// reference is generated from them (`npm run docs`), and an editor shows them on hover.
import { execFile } from 'node:child_process';
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
  it('builds the API reference from the declarations with no warning (TypeDoc treats warnings as errors)', async () => {
    const typedoc = fileURLToPath(new URL('../../node_modules/typedoc/bin/typedoc', import.meta.url));
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [typedoc, '--emit', 'none'], { cwd: root });
    expect(`${stdout}${stderr}`).not.toMatch(/warning|error/i);
  }, 120_000);
});
