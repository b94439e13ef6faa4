// The report as JUnit XML, parsed back by a real XML parser (Chromium's DOMParser) and read as a
// CI's test view reads it.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { evaluate, exact, junitXml } from '../../src/evals.js';
import { mixed } from './support.js';

const executablePath = process.env.KOAGENT_CHROMIUM ?? '/usr/bin/chromium';
const found = existsSync(executablePath);
const reason = `no Chromium at ${executablePath} (install Debian's: apt-get install -y chromium, or set KOAGENT_CHROMIUM)`;
if (!found) console.warn(`test/evals/junit-xml.test.ts: the JUnit XML is not parsed back: ${reason}`);

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
