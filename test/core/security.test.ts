import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent, type Middleware } from '../../src/index.js';
import { mockModel, type MockModel } from '../../src/testing/index.js';

const API_KEY = 'sk-live-7f3a9c1e';
const CARD = '4111-1111-1111-1111';

/** Replaces every secret in a tool's result; counts what it removed, so the test cannot pass vacuously. */
function redactor(): Middleware & { removed: number } {
  const mw = {
    name: 'redact-secrets',
    removed: 0,
    async tool(_ctx, next) {
      const outcome = await next();
      if (outcome.result === undefined) return outcome;
      const text = JSON.stringify(outcome.result);
      const clean = text.replaceAll(API_KEY, '[redacted]').replaceAll(CARD, '[redacted]');
      if (clean !== text) mw.removed++;
      return { ...outcome, result: JSON.parse(clean) };
    },
  } satisfies Middleware & { removed: number };
  return mw;
}

function build(model: MockModel, events: AgentEvent[], redact: Middleware) {
  const vault = defineTool({ name: 'read_vault', description: 'Read the credentials', execute: () => ({ user: 'ada', apiKey: API_KEY }) });
  const pay = defineTool({
    name: 'pay',
    description: 'Pay by card',
    input: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => ({ paid: amount, card: CARD }),
  });
  return createAgent({ name: 'vault-keeper', model, tools: [vault, pay], middleware: [redact], onEvent: (e) => events.push(e) });
}

describe('security: a value a layer redacted is gone after the run', () => {
  it('appears nowhere: not in messages, the state (suspended or final), events, or any later model request', async () => {
    const events: AgentEvent[] = [];
    const redact = redactor();
    const first = mockModel([{ toolCalls: [{ id: 'v', name: 'read_vault', args: {} }, { id: 'p', name: 'pay', args: { amount: 5 } }] }]);
    const paused = await build(first, events, redact).run('Pay with the stored card');
    expect(paused.status).toBe('suspended');
    expect(redact.removed).toBe(1);
    const stored = JSON.stringify(paused.state);
    expect(stored).toContain('[redacted]');
    expect(stored).not.toContain(API_KEY);

    // Resume from the stored text with a fresh agent (as another process would); read the vault again in a later turn.
    const second = mockModel([{ toolCalls: [{ id: 'v2', name: 'read_vault', args: {} }] }, 'All done.']);
    const done = await build(second, events, redact).resume(JSON.parse(stored), { p: true });
    expect(done.text).toBe('All done.');
    expect(redact.removed).toBe(3);

    const everything = {
      messages: JSON.stringify(done.messages),
      state: JSON.stringify(done.state),
      suspendedState: stored,
      events: JSON.stringify(events),
      requests: JSON.stringify([...first.calls, ...second.calls]),
      result: JSON.stringify({ text: done.text, output: done.output, pending: paused.pendingApprovals }),
    };
    for (const [where, text] of Object.entries(everything)) {
      expect(text, where).not.toContain(API_KEY);
      expect(text, where).not.toContain(CARD);
    }
    // The model did get the redacted results, in both segments.
    expect(second.calls.at(-1)!.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      '{"user":"ada","apiKey":"[redacted]"}',
      '{"paid":5,"card":"[redacted]"}',
      '{"user":"ada","apiKey":"[redacted]"}',
    ]);
  });
});
