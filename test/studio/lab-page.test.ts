// Forks, replays and evaluations on the studio's page, in a real Chromium (Debian's, driven by
// playwright-core): a fork made from a step opens the new run, which says where it came from, and
// the old run links to it; a replay through a changed layer marks the layer and the call where it
// diverged, side by side with what the stored run did; the evaluations the store keeps open their
// runs. Each test takes a screenshot into the system's temporary folder and checks it is a PNG.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Middleware } from '../../src/index.js';
import { evaluate, exact } from '../../src/evals.js';
import { startStudio, type Studio } from '../../src/studio/server.js';
import { notingAgent } from '../replay/support.js';
import { tempStore } from './fixtures.js';

const executablePath = process.env.KOAGENT_CHROMIUM ?? '/usr/bin/chromium';
const found = existsSync(executablePath);
const reason = `no Chromium at ${executablePath} (install Debian's: apt-get install -y chromium, or set KOAGENT_CHROMIUM)`;
if (!found) console.warn(`test/studio/lab-page.test.ts: the browser tests are skipped: ${reason}`);

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A layer the stored run did not have: it rewrites the second call's arguments. */
const louder: Middleware = { name: 'louder', tool: (ctx, next) => { if (ctx.toolCallId === 'c2') ctx.args = { text: 'TWO' }; return next(); } };
/** The layer the stored run had, passing every call on. */
const quiet: Middleware = { name: 'louder', tool: (_ctx, next) => next() };

describe.skipIf(!found)(found ? 'forks, replays and evaluations in the studio page (Chromium)' : `forks, replays and evaluations in the studio page (skipped: ${reason})`, () => {
  let temp: ReturnType<typeof tempStore>;
  let shots: string;
  let studio: Studio;
  let browser: Browser;
  let page: Page;
  let stored: string;

  /** A full-page screenshot under the temporary folder, checked to be a non-empty PNG. */
  async function screenshot(name: string): Promise<void> {
    const path = join(shots, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    const bytes = readFileSync(path);
    expect(bytes.length).toBeGreaterThan(PNG_SIGNATURE.length);
    expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  }

  beforeAll(async () => {
    temp = tempStore();
    shots = mkdtempSync(join(tmpdir(), 'koagent-studio-shots-'));
    const file = join(shots, 'notes.txt');
    // The run as it was recorded: the `louder` layer passed every call on.
    stored = (await notingAgent(file, { store: temp.store, middleware: [quiet] }).agent.run('Note four things')).state.runId;
    // The studio runs today's code: `louder` now rewrites the second call.
    const { agent } = notingAgent(file, { store: temp.store, middleware: [louder] });
    studio = await startStudio({ store: temp.store, agents: [agent], pollMs: 100 });
    browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await studio?.close();
    await temp?.dispose();
    if (shots) rmSync(shots, { recursive: true, force: true });
  });

  it('forks a run from a step: the new run opens, says where it came from, and the old run links to it', async () => {
    await page.goto(`${studio.url}#/run/${encodeURIComponent(stored)}`);
    await page.locator('button.fork[data-step="1"]').click();
    const from = page.locator('[data-testid="forked-from"]');
    await from.waitFor();
    expect(await from.textContent()).toBe(`Forked from ${stored} after step 1`);
    const forked = (await page.locator('section.run').getAttribute('data-run'))!;
    expect(forked).not.toBe(stored);
    expect(page.url()).toContain(`#/run/${encodeURIComponent(forked)}`);
    expect(await (await temp.store.loadRun(forked))!.forkedFrom).toEqual({ runId: stored, step: 1 });
    await screenshot('fork-new-run');
    await from.locator('a').click();
    const link = page.locator(`[data-testid="forks"] a.fork-link[data-run="${forked}"]`);
    await link.waitFor();
    expect(await link.textContent()).toContain('after step 1');
    await screenshot('fork-old-run');
  });

  it('replays a run through a changed layer: the layer and the call that diverged are marked, then and now side by side', async () => {
    await page.goto(`${studio.url}#/run/${encodeURIComponent(stored)}`);
    await page.locator('[data-testid="replay-link"]').click();
    const verdict = page.locator('[data-testid="replay-verdict"]');
    await verdict.waitFor();
    expect(await verdict.textContent()).toBe('diverged');
    expect(await page.locator('[data-testid="divergence"]').textContent()).toBe('Diverged at tool note c2 (step 2): the call runs with other arguments');
    const c2 = page.locator('.replay-call[data-call="c2"]');
    expect(await c2.getAttribute('data-same')).toBe('false');
    const layer = c2.locator('tr[data-layer="louder"]');
    expect(await layer.getAttribute('data-same')).toBe('false');
    expect(await layer.locator('.mark').count()).toBe(1);
    expect(await layer.locator('td.then').textContent()).toBe('passed it on');
    expect(await layer.locator('td.now').textContent()).toBe('rewrote-args: /args/text "two" → "TWO"; threw replay_diverged: replay diverged at tool note (c2, step 2): the call runs with other arguments');
    // The call before the change is the same on both sides, and unmarked.
    const c1 = page.locator('.replay-call[data-call="c1"]');
    expect(await c1.getAttribute('data-same')).toBe('true');
    expect(await c1.locator('.mark').count()).toBe(0);
    await screenshot('replay-diverged');
  });

  it('lists the evaluations the store keeps, and an example opens its run with its onion', async () => {
    const { agent } = notingAgent(join(shots, 'eval-notes.txt'), { middleware: [quiet] });
    const report = await evaluate({ name: 'noting', agent, dataset: [{ id: 'four', input: 'Note four things', expected: 'Noted four things.' }], scorers: { answer: exact() }, store: temp.store });
    const runId = report.examples[0]!.runId!;
    await page.goto(`${studio.url}#/evaluations`);
    const evaluation = page.locator(`details.evaluation[data-eval="${report.id}"]`);
    await evaluation.waitFor();
    expect(await evaluation.locator('summary').textContent()).toContain('noting');
    expect(await evaluation.locator('summary .badge').textContent()).toBe('gate passed');
    expect(await evaluation.locator('tr[data-example="four"] td').nth(2).textContent()).toBe('1.00');
    await screenshot('evaluations');
    await evaluation.locator(`a.eval-run[data-run="${runId}"]`).click();
    await page.locator(`section.run[data-run="${runId}"]`).waitFor();
    await page.click('.bar-row[data-call="c1"]');
    const onion = page.locator('.onion[data-call="c1"]');
    await onion.waitFor();
    expect(await onion.locator('.layer[data-layer="louder"]').count()).toBe(1);
    await screenshot('evaluation-run');
  });
});
