// What the manual's pages must say where a reader needs it, checked on the text of the pages:
// each page where a run continues in another process tells a mockModel user about
// `{ resumable: true }`, linking to where testing.md explains it.
import { readFileSync } from 'node:fs';
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
