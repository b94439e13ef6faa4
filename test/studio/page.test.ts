// The studio's page in a real Chromium (Debian's, driven by playwright-core): the onion of a
// finished run, its segments each on their own time axis with their run layers, approvals
// answered from the page (an edit sent or thrown away, never dropped), grouped by run, filters
// that apply as you type, a run updating live, and a page without the token. With KOAGENT_SCREENSHOTS=1 (`npm run docs:screenshots`) they also save the main screens
// to docs/studio/, where docs/studio.md shows them; otherwise they write no file.
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStudio, type Studio } from '../../src/studio/server.js';
import { editorAgent, paymentsAgent, slowAgent, supportAgent, tempStore } from './fixtures.js';

const executablePath = process.env.KOAGENT_CHROMIUM ?? '/usr/bin/chromium';
const found = existsSync(executablePath);
const reason = `no Chromium at ${executablePath} (install Debian's: apt-get install -y chromium, or set KOAGENT_CHROMIUM)`;
if (!found) console.warn(`test/studio/page.test.ts: the browser tests are skipped: ${reason}`);
const shots = fileURLToPath(new URL('../../docs/studio/', import.meta.url));
const screenshots = process.env.KOAGENT_SCREENSHOTS === '1';

/** Save the page as docs/studio/<name>.png, when screenshots are asked for. */
async function snap(page: Page, name: string): Promise<void> {
  if (!screenshots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: `${shots}${name}.png`, fullPage: true });
}

describe.skipIf(!found)(found ? 'the studio page in Chromium' : `the studio page in Chromium (skipped: ${reason})`, () => {
  let temp: ReturnType<typeof tempStore>;
  const executions = { refunds: [] as { orderId: string; amount: number }[] };
  let payments: ReturnType<typeof paymentsAgent>;
  let studio: Studio;
  let browser: Browser;
  let page: Page;
  let traced: string;

  beforeAll(async () => {
    temp = tempStore();
    payments = paymentsAgent(temp.store, executions);
    traced = (await supportAgent(temp.store).run('How do refunds work?')).state.runId;
    studio = await startStudio({ store: temp.store, agents: [payments], pollMs: 100 });
    browser = await chromium.launch({ executablePath });
    page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await studio?.close();
    await temp?.dispose();
  });

  it('shows a finished run\'s onion: each layer of a call, outermost first, with its change as a diff', async () => {
    await page.goto(studio.url);
    await page.click(`tr[data-run="${traced}"] a`);
    await page.click('.bar-row[data-call="call_search"]');
    const onion = page.locator('.onion[data-call="call_search"]');
    await onion.waitFor();
    // The runtime's record: koagent's steps, the middleware, then both dialects' hooks, each drawn inside the one before.
    expect(await onion.locator('.layer').evaluateAll((layers) => layers.map((layer) => [layer.getAttribute('data-layer'), layer.getAttribute('data-source')]))).toEqual([
      ['koagent:validate', 'builtin'], ['audit', 'middleware'], ['tidy-query', 'middleware'], ['log-calls', 'agent-hook'], ['CheckScope', 'criogen'], ['koagent:resolve', 'builtin'],
    ]);
    expect(await onion.locator('.layer[data-layer="koagent:validate"] > .layer[data-layer="audit"] > .layer[data-layer="tidy-query"] > .layer[data-layer="log-calls"] > .layer[data-layer="CheckScope"] > .layer[data-layer="koagent:resolve"] > .core').textContent()).toBe('the tool search');
    // koagent's own steps are marked as such; the user's layers are not.
    expect(await onion.locator('.layer.builtin > .layer-head .builtin-tag').count()).toBe(2);
    expect(await onion.locator('.layer[data-layer="audit"] > .layer-head .builtin-tag').count()).toBe(0);
    expect(await onion.locator('.layer[data-layer="audit"] > .unchanged').textContent()).toBe('passed it on unchanged');
    expect(await onion.locator('.layer[data-layer="log-calls"] > .layer-head').textContent()).toContain('AgentHooks hook · preToolCall, postToolCall');
    const tidy = onion.locator('.layer[data-layer="tidy-query"]');
    expect(await tidy.locator('.effect').first().textContent()).toContain('rewrote the arguments');
    const change = tidy.locator('tr[data-path="/args/query"]');
    expect(await change.locator('.before').textContent()).toBe('"  Refund POLICY "');
    expect(await change.locator('.after').textContent()).toBe('"refund policy"');
    // The transcript and the ledger are beside it: reasoning folded, the call with its key.
    expect(await page.locator('details.reasoning summary').first().textContent()).toBe('reasoning');
    expect(await page.locator('[data-testid="ledger"]').textContent()).toContain(`${traced}:call_search`);
    // A model call names the model it asked.
    await page.click('.bar-row[data-index="0"]');
    expect(await page.locator('.onion [data-testid="call-model"]').textContent()).toBe(' mock (mockModel)');
    await page.click('.bar-row[data-call="call_search"]');
    await snap(page, 'run');
  });

  it('lists the run with the model it asked and the cost the cost budget counted', async () => {
    await page.goto(studio.url);
    const row = page.locator(`tr[data-run="${traced}"]`);
    await row.waitFor();
    expect(await row.locator('[data-testid="models"]').textContent()).toBe('mock');
    const { usage } = (await temp.store.loadRun(traced))!;
    expect(await row.locator('[data-testid="cost"]').textContent()).toBe(`$${usage.cost!.toFixed(4)}`);
    await row.locator('a').click();
    expect(await page.locator('[data-testid="run-models"]').textContent()).toBe('mock');
    expect(await page.locator('[data-testid="run-cost"]').textContent()).toBe(`$${usage.cost!.toFixed(4)}`);
  });

  it('nests a sub-agent\'s calls inside the lead\'s call that ran it', async () => {
    const { state } = await editorAgent(temp.store).run('Check a fact about otters');
    await page.goto(`${studio.url}#/run/${state.runId}`);
    await page.click('.bar-row[data-call="call_researcher"]');
    const nested = page.locator('.onion[data-call="call_researcher"] [data-testid="subagent-calls"] .onion[data-call="call_sub_search"]');
    await nested.waitFor();
    expect(await nested.locator('.call-head').textContent()).toContain('in researcher');
    expect(await nested.locator('tr[data-path="/args/query"] .after').textContent()).toBe('"otters"');
    // The sub-agent runs the lead's layers too, its own inside them.
    expect(await nested.locator('.layer').evaluateAll((layers) => layers.map((layer) => layer.getAttribute('data-layer')))).toEqual(['koagent:validate', 'audit', 'log-calls', 'tidy-query', 'koagent:resolve']);
    await snap(page, 'subagent');
  });

  it('resumes a pending approval approved from the page exactly once (the store has the run completed, the tool ran once)', async () => {
    const { state } = await payments.run('Refund order A-17');
    await page.goto(`${studio.url}#/approvals`);
    const card = page.locator(`.approval[data-run="${state.runId}"]`);
    await card.waitFor();
    expect(JSON.parse((await card.locator('[data-testid="args"]').inputValue()))).toEqual({ orderId: 'A-17', amount: 40 });
    await snap(page, 'approvals');
    await card.locator('[data-testid="approve"]').click();
    expect(await page.locator('[data-testid="notice"]').textContent()).toContain(`Run ${state.runId} resumed`);
    await temp.stored(state.runId, 'completed');
    expect(executions.refunds).toEqual([{ orderId: 'A-17', amount: 40 }]);
    expect((await temp.store.loadRun(state.runId))!.ledger).toEqual([{ id: 'call_refund', entry: 'done' }]);
  });

  it('refuses, on the page, an approval with edited arguments that fail the tool\'s schema', async () => {
    const { state } = await payments.run('Refund order A-17');
    await page.goto(`${studio.url}#/approvals`);
    const card = page.locator(`.approval[data-run="${state.runId}"]`);
    await card.locator('[data-testid="args"]').fill('{ "orderId": "A-17", "amount": 9000 }');
    await card.locator('[data-testid="approve-edited"]').click();
    expect(await card.locator('[data-testid="approval-error"]').textContent()).toMatch(/do not fit refund's schema: amount: .*500/);
    expect((await temp.store.loadRun(state.runId))!.status).toBe('suspended');
    expect(executions.refunds).toHaveLength(1);
  });

  it('shows on the run\'s page the decision taken on the page: approved with edited arguments (42.5 → 40), through the studio', async () => {
    const { state } = await paymentsAgent(temp.store, executions, ['A-17'], 42.5).run('Refund order A-17');
    await page.goto(`${studio.url}#/approvals`);
    const card = page.locator(`.approval[data-run="${state.runId}"]`);
    await card.locator('[data-testid="args"]').fill('{ "orderId": "A-17", "amount": 40 }');
    await card.locator('[data-testid="approve-edited"]').click();
    await temp.stored(state.runId, 'completed');
    await page.goto(`${studio.url}#/run/${encodeURIComponent(state.runId)}`);
    const decision = page.locator('[data-testid="decisions"] li[data-call="call_refund"]');
    await decision.waitFor();
    expect(await decision.getAttribute('data-decision')).toBe('approved');
    expect(await decision.textContent()).toMatch(/refund.*call_refund.*approved the call with edited arguments via studio.*"amount":42\.5.*→.*"amount":40/);
    // The call as it ran after the decision: its approval step says what the human decided, with the edit.
    await page.locator('.bar-row[data-call="call_refund"]').last().click();
    const step = page.locator('.onion[data-call="call_refund"] .layer[data-layer="koagent:approval"]');
    await step.waitFor();
    expect(await step.locator('.effect[data-effect="human-decision"]').textContent()).toMatch(/a human approved the call with edited arguments via studio\/args\/amount42\.5→40/);
    expect(await step.locator(':scope > .unchanged').count()).toBe(0);
  });

  it('updates a running run live in the list, without a reload, as it finishes', async () => {
    const slow = slowAgent(temp.store);
    const finished = slow.agent.run('Is KO-1 in stock?');
    await slow.entered;
    await page.goto(studio.url);
    const row = page.locator(`tr[data-status="running"]`);
    await row.waitFor();
    const runId = (await row.getAttribute('data-run'))!;
    await snap(page, 'runs');
    await page.evaluate(() => ((globalThis as unknown as { sameDocument: boolean }).sameDocument = true));
    slow.release();
    await finished;
    await page.locator(`tr[data-run="${runId}"][data-status="completed"]`).waitFor();
    expect(await page.locator(`tr[data-run="${runId}"] [data-testid="steps"]`).textContent()).toBe('2');
    expect(await page.evaluate(() => (globalThis as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  });

  it('sends edited arguments or throws them away, never drops them: once edited, Approve becomes "Approve with edits", beside "Discard edits"', async () => {
    const { state } = await payments.run('Refund order A-17');
    await page.goto(`${studio.url}#/approvals`);
    const card = page.locator(`.approval[data-run="${state.runId}"]`);
    const args = card.locator('[data-testid="args"]');
    await args.fill('{ "orderId": "A-17", "amount": 12 }');
    // No plain Approve while an edit is on the page: it would send the original arguments.
    expect(await card.locator('[data-testid="approve"]').count()).toBe(0);
    expect(await card.locator('[data-testid="approve-edited"]').textContent()).toBe('Approve with edits');
    expect(await card.locator('[data-testid="edited"]').count()).toBe(1);
    // Thrown away explicitly: the arguments as the layers produced them, and the plain Approve back.
    await card.locator('[data-testid="discard-edits"]').click();
    expect(JSON.parse(await args.inputValue())).toEqual({ orderId: 'A-17', amount: 40 });
    expect(await card.locator('[data-testid="approve-edited"]').count()).toBe(0);
    await args.fill('{ "orderId": "A-17", "amount": 25 }');
    await card.locator('[data-testid="approve-edited"]').click();
    expect(await page.locator('[data-testid="notice"]').textContent()).toContain(`Run ${state.runId} resumed`);
    await temp.stored(state.runId, 'completed');
    expect(executions.refunds.at(-1)).toEqual({ orderId: 'A-17', amount: 25 });
  });

  it('draws each segment on its own time axis, and the wait between them as a break: two minutes of approval squash no call', async () => {
    // The first segment two minutes in the past (the clock the trace and the store read), the resume now.
    const realNow = Date.now.bind(Date);
    const past = vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 120_000);
    let runId: string;
    try {
      runId = (await payments.run('Refund order A-17')).state.runId;
    } finally {
      past.mockRestore();
    }
    await payments.resume(runId, { call_refund: true });
    await page.goto(`${studio.url}#/run/${runId}`);
    await page.locator('.bar-row').first().waitFor();
    const bars = await page.locator('.bar-row').evaluateAll((rows) => rows.map((row) => {
      const track = row.querySelector('.bar-track')!.getBoundingClientRect();
      const bar = row.querySelector('.bar')!.getBoundingClientRect();
      return { segment: row.closest('.segment')?.getAttribute('data-segment'), fromLeft: bar.left - track.left, fromRight: track.right - bar.right };
    }));
    // Every bar within its track: none runs past its end over the label beside it.
    for (const bar of bars) {
      expect(bar.fromLeft).toBeGreaterThanOrEqual(-0.5);
      expect(bar.fromRight).toBeGreaterThanOrEqual(-0.5);
    }
    // Each segment spans its own track, from its first call's start to its last call's end.
    expect(bars.map((bar) => bar.segment)).toEqual(['1', '1', '2', '2']);
    for (const segment of ['1', '2']) {
      const own = bars.filter((bar) => bar.segment === segment);
      expect(Math.min(...own.map((bar) => bar.fromLeft)), JSON.stringify(bars)).toBeLessThan(1);
      expect(Math.min(...own.map((bar) => bar.fromRight)), JSON.stringify(bars)).toBeLessThan(1);
    }
    expect(await page.locator('[data-testid="segment-break"]').textContent()).toMatch(/2 min \d+ s later/);
    expect(await page.locator('.segment-head[data-segment="1"] .outcome').textContent()).toContain('suspended');
  });

  it('shows a segment\'s run layers (criogen onStart/onEnd) as an onion around the loop', async () => {
    await page.goto(`${studio.url}#/run/${traced}`);
    const head = page.locator(`section.run[data-run="${traced}"] .segment-head[data-segment="1"]`);
    expect(await head.locator('[data-testid="run-layers"]').textContent()).toContain('CheckScope');
    await head.click();
    const onion = page.locator('.onion[data-segment="1"]');
    await onion.waitFor();
    expect(await onion.locator('.layer[data-layer="CheckScope"] > .layer-head').textContent()).toContain('criogen hook · onStart, onEnd');
    expect(await onion.locator('.layer[data-layer="CheckScope"] .core').textContent()).toContain('the loop');
  });

  it('groups the approvals by run, with counts, and filters them as you type', async () => {
    const both = paymentsAgent(temp.store, executions, ['B-1', 'B-2']);
    const two = (await both.run('Refund B-1 and B-2')).state.runId;
    const one = (await payments.run('Refund order A-17')).state.runId;
    await page.goto(`${studio.url}#/approvals`);
    const group = page.locator(`.approval-run[data-run="${two}"]`);
    await group.waitFor();
    expect(await group.locator('[data-testid="run-count"]').textContent()).toBe('2 calls waiting');
    expect(await group.locator('.approval').count()).toBe(2);
    expect(await page.locator(`.approval-run[data-run="${one}"] [data-testid="run-count"]`).textContent()).toBe('1 call waiting');
    expect(await page.locator('[data-testid="approvals-count"]').textContent()).toMatch(/^\d+ calls waiting in \d+ runs/);
    // Typed, not submitted: the list narrows to the run whose call matches.
    await page.locator('[data-testid="approvals-filter"]').pressSequentially('"B-2"');
    await page.locator(`.approval-run[data-run="${one}"]`).waitFor({ state: 'detached' });
    expect(await page.locator('.approval-run').evaluateAll((groups) => groups.map((g) => g.getAttribute('data-run')))).toEqual([two]);
    expect(await group.locator('.approval').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-approval')))).toEqual(['call_refund_2']);
    expect(await page.locator('[data-testid="approvals-count"]').textContent()).toContain('1 call in 1 run match');
  });

  it('applies the runs\' filters as you type, without Enter', async () => {
    await editorAgent(temp.store).run('Check a fact about otters');
    await page.goto(studio.url);
    await page.locator('tr[data-run]').first().waitFor();
    expect(await page.locator('tr[data-run] td:nth-child(2)').evaluateAll((cells) => new Set(cells.map((c) => c.textContent)).size)).toBeGreaterThan(1);
    await page.locator('input[aria-label="agent"]').pressSequentially('editor');
    // Until no row of another agent is left (within 5 s: no Enter is ever pressed).
    await page.locator('tr[data-run]', { hasNot: page.locator('td:nth-child(2)', { hasText: /^editor$/ }) }).first().waitFor({ state: 'detached', timeout: 5000 });
    expect(await page.locator('tr[data-run]').count()).toBeGreaterThan(0);
    expect(await page.locator('.filters .hint').textContent()).toBe('filters as you type');
  });

  it('refuses a request without the token, and says so on a page opened without it', async () => {
    const bare = await browser.newPage();
    try {
      await bare.goto(new URL('/', studio.url).href);
      expect(await bare.locator('main').textContent()).toContain('Open the URL the studio printed');
      const status = await bare.evaluate(async () => (await fetch('/api/runs')).status);
      expect(status).toBe(401);
    } finally {
      await bare.close();
    }
  });
});
