// The report's forms: the table for people (scores, means, why examples lost points, the gate's
// verdict), and JUnit XML, parsed back by a real XML parser (Chromium's DOMParser) and read as
// a CI's test view reads it.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { evaluate, exact, formatReport, junitXml, type EvalReport } from '../../src/evals.js';

/** Three examples: one right, one wrong, one whose run fails; ids with XML's special characters and a control character. */
async function mixed(): Promise<EvalReport> {
  const replies: Record<string, string | { error: string }> = { ok: 'Sunny.', 'a<b>&"c\'': 'Rainy & <cold>.', down: { error: 'the model is down' } };
  return evaluate({
    name: 'weather',
    agent: (example) => createAgent({ model: mockModel([replies[example.id]]) }),
    dataset: [{ id: 'ok', input: 'Paris?', expected: 'Sunny.' }, { id: 'a<b>&"c\'', input: 'Oslo?', expected: 'Sunny.' }, { id: 'down', input: 'Rome?', expected: 'Sunny.' }],
    scorers: { answer: exact(), short: (run) => run.text.length < 20 },
    thresholds: { answer: 0.9 },
  });
}

describe('formatReport', () => {
  it('shows a row per example, a row per scorer, why each example lost points and the checks that failed', async () => {
    const report = await mixed();
    const text = formatReport(report);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^weather: 3 examples, 1 failed run \(\d+\.\d s, eval_[0-9a-f-]+\)$/);
    expect(lines).toContainEqual(expect.stringMatching(/^EXAMPLE\s+RUN\s+answer\s+short$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ok\s+run_\S+\s+1\s+1$/));
    expect(lines).toContainEqual(expect.stringMatching(/^a<b>&"c'\s+run_\S+\s+0 ✗\s+1$/));
    expect(lines).toContainEqual(expect.stringMatching(/^down\s+failed\s+0 !\s+0 !$/));
    expect(lines).toContainEqual(expect.stringMatching(/^answer\s+0\.33\s+1\/3\s+≥ 0\.90\s+-$/));
    expect(text).toContain('Lost points\n  a<b>&"c\' answer 0: expected "Sunny.", got "Rainy & <cold>."\n  down: the run failed: ');
    expect(text.endsWith('gate FAILED: 1 of 1 checks\n  answer: mean 0.33 is below its threshold 0.90 (2 of 3 examples lost points)')).toBe(true);
  });

  it('says when the gate passed, and when it had nothing to check', async () => {
    const base = { agent: createAgent({ model: mockModel(['Sunny.', 'Sunny.']) }), dataset: [{ input: 'Paris?', expected: 'Sunny.' }], scorers: { answer: exact() } };
    expect(formatReport(await evaluate({ ...base, thresholds: { answer: 1 } }))).toMatch(/\ngate passed: 1 check held$/);
    expect(formatReport(await evaluate(base))).toMatch(/\ngate: nothing to check \(no thresholds, no baseline\)$/);
  });
});

const executablePath = process.env.KOAGENT_CHROMIUM ?? '/usr/bin/chromium';
const found = existsSync(executablePath);
const reason = `no Chromium at ${executablePath} (install Debian's: apt-get install -y chromium, or set KOAGENT_CHROMIUM)`;
if (!found) console.warn(`test/evals/report.test.ts: the JUnit XML is not parsed back: ${reason}`);

/** The part of the DOM the parse reads. */
interface XmlElement {
  tagName: string;
  textContent: string | null;
  attributes: ArrayLike<{ name: string; value: string }> & Iterable<{ name: string; value: string }>;
  children: ArrayLike<XmlElement> & Iterable<XmlElement>;
  getAttribute(name: string): string | null;
  querySelector(selector: string): XmlElement | null;
  querySelectorAll(selector: string): ArrayLike<XmlElement> & Iterable<XmlElement>;
}
interface XmlDocument { documentElement: XmlElement; querySelector(selector: string): XmlElement | null }

interface ParsedCase { classname: string | null; name: string | null; failure?: { type: string | null; message: string | null; text: string }; error?: { type: string | null; message: string | null; text: string }; properties: Record<string, string> }
interface Parsed { problem?: string; root: string; attributes: Record<string, string>; suites: { name: string | null; tests: string | null; failures: string | null; errors: string | null; cases: ParsedCase[] }[] }

describe.skipIf(!found)(found ? 'junitXml, parsed back by an XML parser' : `junitXml, parsed back by an XML parser (skipped: ${reason})`, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 60_000);
  afterAll(async () => browser?.close());

  /** The document as Chromium's XML parser reads it (a parse error is reported, not repaired). */
  async function parsed(xml: string): Promise<Parsed> {
    const page = await browser.newPage();
    try {
      return await page.evaluate((text) => {
        // In the page: the browser's own XML parser (this file is compiled without the DOM's types).
        const { DOMParser } = globalThis as unknown as { DOMParser: new () => { parseFromString(text: string, type: string): XmlDocument } };
        const doc = new DOMParser().parseFromString(text, 'application/xml');
        const error = doc.querySelector('parsererror');
        const attrs = (el: XmlElement) => Object.fromEntries([...el.attributes].map((a) => [a.name, a.value]));
        const part = (el: XmlElement | null) => (el === null ? undefined : { type: el.getAttribute('type'), message: el.getAttribute('message'), text: el.textContent ?? '' });
        return {
          ...(error === null ? {} : { problem: error.textContent ?? 'parse error' }),
          root: doc.documentElement.tagName,
          attributes: attrs(doc.documentElement),
          suites: [...doc.documentElement.children].map((suite) => ({
            name: suite.getAttribute('name'), tests: suite.getAttribute('tests'), failures: suite.getAttribute('failures'), errors: suite.getAttribute('errors'),
            cases: [...suite.children].map((c) => ({
              classname: c.getAttribute('classname'), name: c.getAttribute('name'),
              ...(c.querySelector('failure') ? { failure: part(c.querySelector('failure')) } : {}),
              ...(c.querySelector('error') ? { error: part(c.querySelector('error')) } : {}),
              properties: Object.fromEntries([...c.querySelectorAll('property')].map((p) => [p.getAttribute('name'), p.getAttribute('value')])),
            })),
          })),
        } as never;
      }, xml);
    } finally {
      await page.close();
    }
  }

  it('is well-formed XML: a suite of the examples and a suite of the gate, with their counts', async () => {
    const report = await mixed();
    const doc = await parsed(junitXml(report));
    expect(doc.problem).toBeUndefined();
    expect(doc.root).toBe('testsuites');
    expect(doc.attributes).toMatchObject({ name: 'weather', tests: '4', failures: '2', errors: '1' });
    expect(doc.suites.map((s) => [s.name, s.tests, s.failures, s.errors])).toEqual([['weather', '3', '1', '1'], ['weather gate', '1', '1', '0']]);
  });

  it('has a test case per example: the run id and scores as properties, a failure for lost points and an error for a failed run, special characters intact', async () => {
    const report = await mixed();
    const [examples, gate] = (await parsed(junitXml(report))).suites;
    const [ok, wrong, down] = examples.cases;
    expect(ok).toEqual({ classname: 'weather', name: 'ok', properties: { runId: report.examples[0].runId, 'score.answer': '1', 'score.short': '1' } });
    expect(wrong.name).toBe('a<b>&"c\'');
    expect(wrong.failure).toEqual({ type: 'score', message: 'answer 0: expected "Sunny.", got "Rainy & <cold>."', text: 'answer 0: expected "Sunny.", got "Rainy & <cold>."' });
    expect(down.error).toMatchObject({ type: 'run', message: expect.stringMatching(/^the run failed: .*the model is down/) });
    expect(gate.cases).toEqual([{ classname: 'weather.gate', name: 'answer threshold', properties: {}, failure: { type: 'gate', message: 'answer: mean 0.33 is below its threshold 0.90 (2 of 3 examples lost points)', text: 'answer: mean 0.33 is below its threshold 0.90 (2 of 3 examples lost points)' } }]);
  });

  it('stays well-formed when an id holds characters XML forbids (they are dropped; a reason shows them escaped, as JSON)', async () => {
    const report = await evaluate({ agent: createAgent({ model: mockModel(['bell \u0007 and \u0000 nul']) }), dataset: [{ id: 'x\u0001', input: 'Hi', expected: 'ok' }], scorers: { answer: exact() } });
    const doc = await parsed(junitXml(report));
    expect(doc.problem).toBeUndefined();
    expect(doc.suites[0].cases[0].name).toBe('x');
    expect(doc.suites[0].cases[0].failure!.message).toBe('answer 0: expected "ok", got "bell \\u0007 and \\u0000 nul"');
  });
});
