// The studio's playground in a real Chromium: a run started from the page streams its tokens in
// as they come (through the run's event log and koagent/http's routes under /api/play), its
// approval is answered in place — with edited arguments only through "Approve with edits", and
// an edit not sent is never dropped without a word — and the run goes on with what was approved.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool } from '../../src/index.js';
import { sqliteStore } from '../../src/sqlite.js';
import { startStudio, type Studio } from '../../src/studio/server.js';
import { mockModel } from '../../src/testing/index.js';
import { heldModel, type HeldModel } from '../support/held-model.js';

const executablePath = process.env.KOAGENT_CHROMIUM ?? '/usr/bin/chromium';
const found = existsSync(executablePath);
const reason = `no Chromium at ${executablePath} (install Debian's: apt-get install -y chromium, or set KOAGENT_CHROMIUM)`;
if (!found) console.warn(`test/studio/playground.test.ts: the browser tests are skipped: ${reason}`);

describe.skipIf(!found)(found ? 'the studio playground in Chromium' : `the studio playground in Chromium (skipped: ${reason})`, () => {
  let dir: string;
  let store: ReturnType<typeof sqliteStore>;
  let studio: Studio;
  let browser: Browser;
  let page: Page;
  let hold: HeldModel;
  const refunds: { orderId: string; amount: number }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'koagent-playground-'));
    store = sqliteStore({ path: join(dir, 'runs.db') });
    const refund = defineTool({
      name: 'refund',
      description: 'Refund an order',
      input: z.object({ orderId: z.string(), amount: z.number() }),
      needsApproval: true,
      execute: (args) => (refunds.push(args), { refunded: args.amount, orderId: args.orderId }),
    });
    // The first reply holds after its first word until the test has seen that word on the page.
    hold = heldModel(mockModel([
      { content: [{ type: 'text', text: 'Checking order 42 before I refund it.' }], toolCalls: [{ id: 'call_refund', name: 'refund', args: { orderId: '42', amount: 30 } }] },
      'Refunded order 42.',
    ]), 1);
    const cashier = createAgent({ name: 'cashier', model: hold.model, tools: [refund] });
    studio = await startStudio({ store, agents: [cashier] });
    browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 60_000);
  afterAll(async () => {
    hold?.release();
    await browser?.close();
    await studio?.close();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts a run and shows its tokens as they arrive, before the run ends', async () => {
    await page.goto(studio.url);
    await page.click('header nav a[href="#/play"]');
    await page.fill('[data-testid="play-input"]', 'Refund order 42');
    await page.click('[data-testid="play-send"]');
    // The first word is on the page while the model still holds the rest: the run is running.
    await page.locator('[data-testid="play-text"]', { hasText: /^Checking/ }).waitFor();
    expect(await page.textContent('[data-testid="play-status"]')).toBe('running');
    expect(await page.textContent('[data-testid="play-text"]')).not.toContain('refund it.');
    hold.release();
    await page.locator('[data-testid="play-status"]', { hasText: /^suspended$/ }).waitFor();
    expect(await page.textContent('[data-testid="play-text"]')).toBe('Checking order 42 before I refund it.');
    expect(Number(await page.textContent('[data-testid="play-deltas"]'))).toBeGreaterThan(1);
    expect(await page.locator('[data-testid="play-events"] li').allTextContents()).toContain('approval.requested refund');
  });

  it('approves with edited arguments only as its own action; an edit not sent is never dropped without a word', async () => {
    const card = page.locator('[data-play-approval="call_refund"]');
    await card.waitFor();
    expect(JSON.parse(await card.locator('[data-testid="play-args"]').inputValue())).toEqual({ orderId: '42', amount: 30 });
    await card.locator('[data-testid="play-args"]').fill(JSON.stringify({ orderId: '42', amount: 12 }, null, 2));
    // Edited: the plain Approve is gone; the edit is marked as not sent, and a denial says it drops it.
    expect(await card.locator('[data-testid="play-approve"]').count()).toBe(0);
    expect(await card.locator('[data-testid="play-edited"]').textContent()).toContain('not sent');
    expect(await card.locator('[data-testid="play-deny"]').textContent()).toBe('Deny and drop edits');
    // Following another run would take the card away: refused, naming the call, the edit kept.
    await page.fill('[data-testid="play-follow-id"]', 'run_elsewhere');
    await page.click('[data-testid="play-follow"]');
    expect(await page.textContent('[data-testid="play-blocked"]')).toContain('call_refund');
    expect(JSON.parse(await card.locator('[data-testid="play-args"]').inputValue())).toEqual({ orderId: '42', amount: 12 });
    await card.locator('[data-testid="play-approve-edited"]').click();
    // The resumed segment's events follow the first segment's in the same log.
    await page.locator('[data-testid="play-events"] li', { hasText: 'run.end completed' }).waitFor();
    expect(refunds).toEqual([{ orderId: '42', amount: 12 }]);
    const events = await page.locator('[data-testid="play-events"] li').allTextContents();
    expect(events).toContain('tool.done refund → {"refunded":12,"orderId":"42"}');
    expect(await page.textContent('[data-testid="play-text"]')).toContain('Refunded order 42.');
    // The run keeps who approved what, through which surface.
    const runId = (await page.textContent('[data-testid="play-run-id"]'))!;
    const [decision] = (await store.loadRun(runId))!.decisionLog ?? [];
    expect(decision).toMatchObject({ toolCallId: 'call_refund', decision: 'approved', args: { orderId: '42', amount: 30 }, editedArgs: { orderId: '42', amount: 12 }, actor: { id: 'studio' }, surface: 'studio' });
  });

  it('follows a run it did not start (of an agent the studio does not serve), from its first event', async () => {
    const other = createAgent({ name: 'other', model: mockModel(['Written elsewhere, read here.']), store });
    const stream = other.stream('Say something');
    for await (const _ of stream);
    const { runId } = await stream.result;
    await page.goto(`${studio.url}#/play/${runId}`);
    // Its log read from the first event to its run.end.
    await page.locator('[data-testid="play-events"] li', { hasText: 'run.end completed' }).waitFor();
    expect(await page.textContent('[data-testid="play-run-id"]')).toBe(runId);
    expect(await page.textContent('[data-testid="play-text"]')).toBe('Written elsewhere, read here.');
    expect((await page.locator('[data-testid="play-events"] li').allTextContents())[0]).toBe('run.start');
  });
});
