// Datasets: examples given as an array or as a JSONL file. Every mistake in a file names its line
// and says how to write it; ids are settled (given, or the line or position) and never shared.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkExamples, loadDataset } from '../../src/evals.js';

const dir = mkdtempSync(join(tmpdir(), 'koagent-dataset-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** A JSONL file of these lines, in the test's folder. */
function jsonl(...lines: string[]): string {
  const file = join(dir, `data-${n++}.jsonl`);
  writeFileSync(file, lines.join('\n'));
  return file;
}

describe('a JSONL dataset', () => {
  it('holds one example a line, blank lines skipped, each id given or its line', async () => {
    const file = jsonl('{"id": "paris", "input": "Weather in Paris?", "expected": "Sunny."}', '', '{"input": [{"role": "user", "content": "Hi"}], "metadata": {"tag": "greeting"}}', '');
    expect(await loadDataset(file)).toEqual([
      { id: 'paris', input: 'Weather in Paris?', expected: 'Sunny.' },
      { id: 'line 3', input: [{ role: 'user', content: 'Hi' }], metadata: { tag: 'greeting' } },
    ]);
  });

  it('is read from a file URL too (new URL(…, import.meta.url))', async () => {
    const file = jsonl('{"input": "Hi"}');
    expect((await loadDataset(pathToFileURL(file)))[0].id).toBe('line 1');
  });

  it('refuses a line that is not JSON, naming the file, the line and the shape of a line', async () => {
    const file = jsonl('{"input": "Hi"}', '{"input": "Bye",}');
    await expect(loadDataset(file)).rejects.toThrow(new RegExp(`${file}:2: this line is not JSON \\(.*\\): a JSONL file holds one example a line, each a JSON object on a single line, e\\.g\\. \\{"id": "paris"`));
  });

  it('refuses an example spread over several lines, at its first line', async () => {
    const file = jsonl('{', '  "input": "Hi"', '}');
    await expect(loadDataset(file)).rejects.toThrow(`${file}:1: this line is not JSON`);
  });

  it('refuses a line without an input, saying what an input is', async () => {
    const file = jsonl('{"input": "Hi"}', '{"expected": "Hello."}');
    await expect(loadDataset(file)).rejects.toThrow(`${file}:2: the example has no "input": give the agent's input as text, a message ({"role": "user", "content": "…"}) or an array of messages`);
  });

  it('refuses a misspelt field, naming the field meant', async () => {
    const file = jsonl('{"input": "Hi", "expect": "Hello."}');
    await expect(loadDataset(file)).rejects.toThrow(`${file}:1: expect is not a field of an example; did you mean \`expected\`?`);
  });

  it('refuses a line that is JSON but not an object', async () => {
    const file = jsonl('["Hi", "Hello."]');
    await expect(loadDataset(file)).rejects.toThrow(`${file}:1: an example is a JSON object with an input and what is expected of its run`);
  });

  it('refuses an id used twice, naming both lines', async () => {
    const file = jsonl('{"id": "a", "input": "Hi"}', '{"id": "b", "input": "Hi"}', '{"id": "a", "input": "Bye"}');
    await expect(loadDataset(file)).rejects.toThrow(`${file}:3: the id "a" is taken by line 1 already: give each example an id of its own`);
  });

  it('refuses an empty file, a missing file and a file that is not JSONL, each with the fix', async () => {
    await expect(loadDataset(jsonl('', '  '))).rejects.toThrow(/holds no example: write one JSON object a line/);
    await expect(loadDataset(join(dir, 'nope.jsonl'))).rejects.toThrow(/no dataset at .*nope\.jsonl \(ENOENT\): give the path of a JSONL file/);
    await expect(loadDataset(join(dir, 'data.csv'))).rejects.toThrow(/is not a JSONL file \(\.jsonl, one example a line\); for examples in a module, import its array/);
  });
});

describe('a dataset in a module (an array)', () => {
  it('gives each example without an id its position', () => {
    expect(checkExamples([{ input: 'a' }, { id: 'b', input: 'b' }, { id: 7, input: 'c' } as never]).map((e) => e.id)).toEqual(['#1', 'b', '7']);
  });

  it('refuses what is not an array of examples, naming the example and the fix', () => {
    expect(() => checkExamples([] as never)).toThrow('dataset holds no example');
    expect(() => checkExamples({ input: 'a' } as never)).toThrow('dataset must be an array of examples');
    expect(() => checkExamples([{ input: 'a' }, { input: '' }])).toThrow(/dataset\[1\]: its "input" is empty or not one/);
    expect(() => checkExamples([{ id: 'x', input: 'a' }, { id: 'x', input: 'b' }])).toThrow('dataset[1]: the id "x" is taken by dataset[0] already');
  });
});
