// The events the built-in middleware emit are part of `AgentEvent` once koagent/middleware is
// imported: each middleware module declares its own in `MiddlewareEvents`. A listener narrows
// them by `type` with no cast, `ctx.emit` checks a known type's fields, and a program's own
// middleware declares its events the same way. Each `@ts-expect-error` below is a compile error
// today (`npm run typecheck` fails with "Unused '@ts-expect-error'" the day it is not).
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createAgent, defineMiddleware, ProviderError, type AgentEvent, type ModelContext } from '../../src/index.js';
import { modelFallbackMiddleware } from '../../src/middleware.js';
import type { PiiReport } from '../../src/middleware/pii-redaction-middleware.js';
import { provider, reply } from '../support/core.js';

declare module '../../src/types.js' {
  interface MiddlewareEvents {
    'test.audited': { toolName: string; allowed: boolean };
  }
}

const overloaded = new ProviderError({ provider: 'test', kind: 'http', status: 503, providerMessage: 'overloaded', retryable: true });
const down = Object.assign(provider(() => { throw overloaded; }), { modelId: 'primary' });
const backup = Object.assign(provider(() => reply('from backup')), { modelId: 'backup' });

describe("the built-in middleware's events on AgentEvent", () => {
  it("narrows e.type === 'model.fallback' to the fields the fallback emits", async () => {
    const seen: string[] = [];
    const agent = createAgent({
      model: down,
      middleware: [modelFallbackMiddleware({ models: [backup] })],
      onEvent: (e) => {
        if (e.type !== 'model.fallback') return;
        expectTypeOf(e).toMatchTypeOf<{ runId: string; at: number; step: number; from: string; to: string; attempt: number; message: string }>();
        seen.push(`${e.step}:${e.from}→${e.to} #${e.attempt} ${e.message}`);
      },
    });
    await agent.run('Hi');
    expect(seen).toEqual([`1:primary→backup #1 ${overloaded.message}`]);
  });

  it("types every built-in's event by its declared shape", () => {
    type Of<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;
    expectTypeOf<Of<'pii.redacted'>['found']>().toEqualTypeOf<PiiReport['found']>();
    expectTypeOf<Of<'guardrail.tripped'>['stage']>().toEqualTypeOf<'input' | 'output'>();
    expectTypeOf<Of<'rate-limit.wait'>['reason']>().toEqualTypeOf<'requests' | 'tokens' | 'paused'>();
    expectTypeOf<Of<'loop_detection.detected'>['action']>().toEqualTypeOf<'warn' | 'end'>();
    expectTypeOf<Of<'cache.hit'>['savedTokens']>().toEqualTypeOf<number>();
    expectTypeOf<Of<'run.start'>['sessionId']>().toEqualTypeOf<string>();
  });

  it('still refuses a type that no one declared', () => {
    const listener = (e: AgentEvent) =>
      // @ts-expect-error 'model.fallbak' is no event's type: the comparison has no overlap
      e.type === 'model.fallbak';
    expect(listener({ type: 'output', output: 1, runId: 'r', at: 0 })).toBe(false);
  });
});

describe('ctx.emit, checked against the declared events', () => {
  it("takes a declared type's fields and any undeclared type, and the listener gets them typed", async () => {
    const events: AgentEvent[] = [];
    const audit = defineMiddleware({
      name: 'audit',
      model: (ctx, next) => {
        ctx.emit?.({ type: 'test.audited', toolName: 'search', allowed: true });
        ctx.emit?.({ type: 'audit.note', text: 'an event no one declared carries what it likes' });
        return next();
      },
    });
    await createAgent({ model: backup, middleware: [audit], onEvent: (e) => events.push(e) }).run('Hi');
    const audited = events.filter((e) => e.type === 'test.audited');
    expectTypeOf(audited[0].allowed).toEqualTypeOf<boolean>();
    expect(audited.map(({ toolName, allowed }) => ({ toolName, allowed }))).toEqual([{ toolName: 'search', allowed: true }]);
    expect(events.map((e) => e.type)).toContain('audit.note');
  });

  it("refuses a declared type's fields missing or of the wrong type (at compile time: the run does not check them)", () => {
    // Never called: what is checked is that each call below is a compile error.
    const misuse = (ctx: ModelContext) => {
      // @ts-expect-error a model.fallback event carries step, from, to, attempt and message
      ctx.emit?.({ type: 'model.fallback', step: ctx.step, from: 'a' });
      // @ts-expect-error `allowed` is a boolean
      ctx.emit?.({ type: 'test.audited', toolName: 'search', allowed: 'yes' });
      // @ts-expect-error a core event's fields are checked too: model.retry has no `attempts`
      ctx.emit?.({ type: 'model.retry', step: 1, attempts: 2, delayMs: 0, fromRetryAfter: false, message: '' });
    };
  });
});
