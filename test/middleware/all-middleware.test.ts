// Every built-in middleware on one agent, in the order docs/built-in-middleware.md recommends,
// with an AgentHook and a criogen Hook: a scripted conversation goes through all of them, the
// layers are entered in the documented order and their effects follow from it. (A suspend → JSON
// → resume in another process: all-middleware-processes.test.ts.)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/index.js';
import { todosOf } from '../../src/middleware.js';
import { traceOf, type TracedCall } from '../../src/trace.js';
import { buildAllMiddlewareAgent, FINAL, GREETING, normalised, ORDER, PLAN, TRIP } from '../fixtures/all-middleware-agent.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const RAW = ['ana@example.com', 'info@visitoslo.example', 'desk@grand-oslo.example'];

/** The middleware order the docs recommend: the factories of the page's "Where each belongs" block, by name. */
function documentedOrder(): string[] {
  const page = readFileSync(join(ROOT, 'docs/built-in-middleware.md'), 'utf8');
  const section = page.slice(page.indexOf('## Where each belongs in the stack'), page.indexOf('\n## ', page.indexOf('## Where each belongs in the stack') + 3));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const list = block.slice(block.indexOf('middleware: ['));
  return [...list.matchAll(/\b([a-z][A-Za-z]*)Middleware\(/g)].map(([, name]) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
}

const names = (call: TracedCall | undefined) => call?.layers.map((layer) => layer.name) ?? [];
const effectsOf = (call: TracedCall | undefined, layer: string) => call?.layers.filter((l) => l.name === layer).flatMap((l) => l.effects.map((e) => e.type)) ?? [];

describe('all the built-in middleware on one agent', () => {
  let built: ReturnType<typeof buildAllMiddlewareAgent>;
  let paused: RunResult;
  let done: RunResult;
  let greetedAgain: RunResult;
  let calls: TracedCall[];
  const call = (id: string, segment = 1) => calls.find((c) => c.id === id && c.segment === segment);

  beforeAll(async () => {
    built = buildAllMiddlewareAgent();
    await built.agent.run(GREETING);
    paused = await built.agent.run(TRIP);
    done = await built.agent.resume(JSON.parse(JSON.stringify(paused.state)), { [paused.pendingApprovals[0]!.toolCallId]: true });
    greetedAgain = await built.agent.run(GREETING);
    calls = traceOf(done.state)!.calls;
  });

  describe('the order of the layers', () => {
    it('is the order the docs recommend, the agent built from it', () => {
      expect(documentedOrder()).toEqual([...ORDER]);
    });

    it('enters the model layers outermost first in that order, the hooks inside them', () => {
      const withModel = ORDER.filter((name) => !['tool-cache', 'tool-emulator'].includes(name));
      expect(names(call('model:1:1'))).toEqual([...withModel, 'agent-hooks', 'tally']);
    });

    it('enters the tool layers in that order, validation after the two that read raw calls, koagent\'s own steps innermost', () => {
      expect(names(call('c0-1'))).toEqual(['todo-list', 'loop-detection', 'koagent:validate', 'tool-call-limit', 'tool-cache', 'pii-redaction', 'tool-emulator', 'audit', 'koagent:resolve', 'koagent:approval']);
    });
  });

  describe('each layer acts where it stands', () => {
    it('the todo list answers write_todos before any other tool layer sees it, and shows the list on every request', () => {
      expect(names(call('c0-0'))).toEqual(['todo-list']);
      expect(built.seen.log.some((line) => line.startsWith('audit: write_todos'))).toBe(false);
      expect(todosOf(done.state)).toEqual(PLAN.map((todo) => ({ ...todo, status: 'completed' })));
      const last = built.primary.asked.at(-1)!;
      expect(last.tools?.map((spec) => spec.name)).toEqual(['get_weather', 'find_contacts', 'search_hotels', 'check_availability', 'book_hotel', 'send_email', 'write_todos']);
    });

    it('a repeat of a cached call is settled by the cache, inside the loop window and the tool-call count', () => {
      expect(names(call('c1-0'))).toEqual(['todo-list', 'loop-detection', 'koagent:validate', 'tool-call-limit', 'tool-cache']);
      expect(effectsOf(call('c1-0'), 'tool-cache')).toEqual(['short-circuit']);
      expect(done.usage.toolCacheHits).toBe(1);
      expect(built.seen.ran.filter((tool) => tool === 'get_weather')).toHaveLength(1);
    });

    it('the tool-call limit refuses the second hotel search before the cache or the tool', () => {
      expect(names(call('c2-1'))).toEqual(['todo-list', 'loop-detection', 'koagent:validate', 'tool-call-limit']);
      expect(built.seen.ran.filter((tool) => tool === 'search_hotels')).toHaveLength(1);
    });

    it('loop detection refuses the third identical call before it is counted or validated', () => {
      expect(names(call('c5-0'))).toEqual(['todo-list', 'loop-detection']);
      expect(built.events.find((e) => e.type === 'loop_detection.detected')).toMatchObject({ toolName: 'check_availability', loop: 'repeat', times: 3 });
      expect(built.seen.ran.filter((tool) => tool === 'check_availability')).toHaveLength(2);
    });

    it('PII is redacted before every layer outside it reads it: guardrails, caches, state, events and stores never hold a raw value', () => {
      expect(effectsOf(call('c1-1'), 'pii-redaction')).toEqual(['replaced-result']);
      expect(built.seen.log).toContain('guardrails: input checked: Plan a weekend in Oslo for me ([EMAIL]) and book a hotel.');
      expect(built.seen.log).toContain(`guardrails: output checked: ${FINAL.replace('ana@example.com', '[EMAIL]')}`);
      expect(built.seen.log).toContain('tool-emulator: send_email to [EMAIL]');
      const everything = JSON.stringify([done.state, paused.state, built.events, built.stores.responses.written, built.stores.toolResults.written]);
      for (const raw of RAW) expect(everything).not.toContain(raw);
      expect(built.stores.responses.written.length).toBeGreaterThan(0);
      expect(done.text).toBe(FINAL.replace('ana@example.com', '[EMAIL]'));
    });

    it('the retry is outside the fallback: a model that fails moves on to the backup at once, and the retry asks the whole list again', () => {
      expect(effectsOf(call('model:2:1'), 'model-fallback')).toEqual(['next-again']);
      expect(effectsOf(call('model:4:1'), 'retry')).toEqual(['next-again']);
      const step4 = built.events.filter((e) => e.step === 4 && (e.type === 'model.fallback' || e.type === 'model.retry')).map((e) => e.type);
      expect(step4).toEqual(['model.fallback', 'model.retry']);
      // Inside the fallback, the rate limit counts each model on its own.
      expect(names(call('model:2:1')).filter((name) => name === 'rate-limit')).toHaveLength(2);
    });

    it('the cost budget, outermost, prices each call at the model that answered, cached input at its price', () => {
      const byModel = (done.state.hookState['cost-budget'] as { byModel: Record<string, number> }).byModel;
      expect(Object.keys(byModel).sort()).toEqual(['backup-model', 'primary-model']);
      expect(done.usage.cost).toBeCloseTo(Object.values(byModel).reduce((a, b) => a + b, 0), 10);
      expect(done.usage.cachedInputTokens).toBeGreaterThan(0);
      expect(done.usage.modelFallbacks).toBe(2);
    });

    it('context editing clears old results in the kept transcript, before the todo list copies it for the request', () => {
      expect(done.usage.contextTokensCleared).toBeGreaterThan(0);
      const cleared = done.messages.filter((m) => m.role === 'tool' && m.metadata?.contextCleared === true);
      expect(cleared.length).toBeGreaterThan(0);
      const sent = built.primary.asked.at(-1)!.messages;
      expect(sent.filter((m) => m.role === 'tool' && m.metadata?.contextCleared === true)).toHaveLength(cleared.length);
    });

    it('the response cache answers a repeated request with no model turn; the tool selector and guardrails still run outside it', () => {
      expect(greetedAgain.text).toBe('I plan trips: weather, hotels, bookings.');
      expect(greetedAgain.usage.cacheHits).toBe(1);
      // The one call is the tool selector's side call.
      expect(greetedAgain.usage.modelCalls).toBe(1);
      expect(built.seen.log.slice(-3)).toEqual([`guardrails: input checked: ${GREETING}`, 'response-cache: hit at step 1', 'guardrails: output checked: I plan trips: weather, hotels, bookings.']);
    });

    it('both dialects\' hooks run innermost: the AgentHook sees only the calls no layer settled, the criogen Hook each model turn', () => {
      const audited = built.seen.log.filter((line) => line.startsWith('audit: ')).map((line) => line.split(' ')[1]);
      expect(audited).toEqual(['get_weather', 'find_contacts', 'search_hotels', 'check_availability', 'check_availability', 'book_hotel', 'book_hotel', 'send_email']);
      // Inside the fallback, the criogen Hook's beforeModel runs for each attempt: 9 replies, 3 failed attempts.
      expect(done.state.hookState.tally).toEqual({ turns: 12 });
    });
  });
});
