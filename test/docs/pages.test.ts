// What the manual's pages must say where a reader needs it, checked on the text of the pages:
// each page where a run continues in another process tells a mockModel user about
// `{ resumable: true }`, linking to where testing.md explains it; and the built-in middleware
// are imported from one place, `koagent/middleware`, in the README, the manual and the examples.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const page = (name: string) => readFileSync(join(root, name), 'utf8');

describe('resumable mock models, said where a run continues in another process', () => {
  const testing = page('docs/testing.md');

  it('testing.md has the section the other pages link to', () => {
    expect(testing).toContain('## A script that survives a crash: `resumable`');
  });

  it.each(['docs/durable-runs.md', 'docs/cli.md', 'docs/workers.md', 'docs/approval-and-resume.md'])('%s says a mockModel there needs { resumable: true }, linking to testing.md', (name) => {
    const text = page(name).replace(/\s+/g, ' ');
    expect(text).toMatch(/mockModel[^.]*\{ resumable: true \}/);
    expect(text).toContain('(testing.md#a-script-that-survives-a-crash-resumable)');
  });
});

/** Every name `src/middleware.ts` exports (values and types): the built-in middleware and their companions. */
function builtInNames(): Set<string> {
  const source = page('src/middleware.ts');
  const names = [...source.matchAll(/^export \{([^}]*)\}/gm)].flatMap((m) => m[1].split(',').map((n) => n.trim().replace(/^type\s+/, '')).filter(Boolean));
  return new Set(names);
}

/** `page:line: name` for each built-in middleware name an `import … from 'koagent'` of the file brings in. */
function importsFromRoot(name: string, builtIns: Set<string>): string[] {
  const text = page(name);
  const found: string[] = [];
  for (const match of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'koagent'/g)) {
    const line = text.slice(0, match.index).split('\n').length;
    for (const imported of match[1].split(',').map((n) => n.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]).filter(Boolean)) {
      if (builtIns.has(imported)) found.push(`${name}:${line}: ${imported}`);
    }
  }
  return found;
}

describe('the built-in middleware, imported from koagent/middleware everywhere', () => {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
    ...readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.ts')).map((f) => `examples/${f}`),
  ];
  const builtIns = builtInNames();

  it('knows the names koagent/middleware exports (the check itself reads them)', () => {
    expect([...builtIns]).toEqual(expect.arrayContaining(['retryMiddleware', 'isRetryableError', 'timeoutMiddleware', 'TimeoutError', 'compactionMiddleware', 'mediaStoreMiddleware', 'fileMediaStore', 'piiRedactionMiddleware']));
  });

  it('no page of the README or the manual, and no example, imports one from the package root', () => {
    expect(files.flatMap((name) => importsFromRoot(name, builtIns))).toEqual([]);
  });

  it('the README\'s entry points send readers to koagent/middleware for them', () => {
    const entryPoints = page('README.md').split('## Entry points')[1]!.split('\n## ')[0]!.replace(/\s+/g, ' ');
    expect(entryPoints).toMatch(/`koagent\/middleware` \(every built-in middleware/);
  });
});
