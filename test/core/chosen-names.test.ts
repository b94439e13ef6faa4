// Names that users, hooks and models choose — a hook's name, a usage counter, a metadata key, a
// tool call's id, a tool's or a model's name — are keys like any other, `__proto__`,
// `constructor` and `prototype` included: each stays an own key through the run state, its
// JSON, a store (memory and SQLite) and a resume, and no other name reads what it holds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, memoryStore, ProviderError, type Middleware, type RunState } from '../../src/index.js';
import type { Hook } from '../../src/hooks.js';
import { bounded, jsonChanges } from '../../src/features/layer-trace/record.js';
import { costBudgetMiddleware, modelFallbackMiddleware, piiRedactionMiddleware, toolCallLimitMiddleware, toolEmulatorMiddleware } from '../../src/middleware.js';
import { sandboxedHooks } from '../../src/sandbox.js';
import { sqliteStore } from '../../src/sqlite.js';
import type { RunStore } from '../../src/store.js';
import { mockModel } from '../../src/testing/index.js';

const AWKWARD = ['__proto__', 'constructor', 'prototype'] as const;
/** koagent's own usage counts: a layer may not count under these names. */
const OWN_COUNTS = new Set(['inputTokens', 'outputTokens', 'totalTokens', 'modelCalls', 'toolCalls', 'cachedInputTokens', 'cacheWriteInputTokens']);
const name = fc.oneof(fc.constantFrom(...AWKWARD), fc.string({ minLength: 1, maxLength: 8 }));
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** An object with `key` as an own key, as JSON gives it (`{ [key]: value }` would set the prototype for `__proto__`). */
const own = (key: string, value: unknown): Record<string, unknown> => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value)}}`);

function expectOwn(target: object, key: string, value: unknown): void {
  expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
  expect(Object.hasOwn(target, key), `an own key ${JSON.stringify(key)} in ${JSON.stringify(target)}`).toBe(true);
  expect(Object.getOwnPropertyDescriptor(target, key)?.value).toEqual(value);
}

/**
 * A run that names everything `mine`: a criogen hook that saves state, a usage counter, a
 * metadata key and the id of a call a human approves; beside it a hook and a call named `other`
 * (denied). It suspends, is stored, and is resumed from the store by a second agent. Returns
 * what the hooks saw and the run's end, and its state as the store loads it.
 */
async function namedRun(store: RunStore, mine: string, other: string) {
  const seen = { mine: [] as unknown[], other: [] as unknown[], metadata: [] as unknown[], deployed: [] as unknown[] };
  const build = () => {
    const hooks: Hook[] = [
      { name: mine, onStart: (ctx) => ({ state: { n: ((ctx.hookState as { n?: number } | undefined)?.n ?? 0) + 1 } }), onEnd: (ctx) => void seen.mine.push(ctx.hookState) },
      { name: other, onStart: (ctx) => void seen.other.push(ctx.hookState) },
    ];
    const counter: Middleware = {
      name: 'counter',
      run(ctx, next) {
        seen.metadata.push(Object.getPrototypeOf(ctx.metadata) === Object.prototype && Object.hasOwn(ctx.metadata, mine) ? ctx.metadata[mine] : 'lost');
        if (!OWN_COUNTS.has(mine)) ctx.countUsage(mine, 3);
        return next();
      },
    };
    const deploy = defineTool({ name: 'deploy', description: 'Deploys', input: z.object({ to: z.string() }), needsApproval: true, execute: ({ to }) => { seen.deployed.push(to); return 'deployed'; } });
    const model = mockModel([{ toolCalls: [{ id: mine, name: 'deploy', args: { to: 'mine' } }, { id: other, name: 'deploy', args: { to: 'other' } }] }, 'Done.'], { resumable: true });
    return createAgent({ name: 'namer', model, tools: [deploy], hooks, store }).use(counter);
  };
  const paused = await build().run('Deploy', { metadata: own(mine, 'meta') });
  expect(paused.pendingApprovals.map((p) => p.toolCallId)).toEqual([mine, other]);
  const decisions = { ...own(mine, true), ...own(other, { approved: false, reason: 'not that one' }) } as Record<string, boolean>;
  const done = await build().resume(paused.runId, decisions, { metadata: own(mine, 'meta') });
  return { seen, paused, done, loaded: (await store.loadRun(done.runId))! };
}

/** Every map of `state` holds `mine` as an own key, with what the run put there. */
function expectNamed(state: RunState, mine: string, other: string, segments: number): void {
  expectOwn(state.hookState, mine, { n: segments });
  expect(Object.hasOwn(state.hookState, other)).toBe(false);
  if (!OWN_COUNTS.has(mine)) expectOwn(state.usage, mine, 3 * segments);
}

describe('a name drawn from __proto__, constructor, prototype and any string', () => {
  for (const kind of ['memory', 'sqlite'] as const) {
    it(`round-trips as an own key through the state, its JSON, a ${kind} store and a resume, and no other name reads it`, async () => {
      const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'koagent-names-')) : undefined;
      if (dir !== undefined) dirs.push(dir);
      let n = 0;
      await fc.assert(fc.asyncProperty(fc.uniqueArray(name, { minLength: 2, maxLength: 2 }), async ([mine, other]) => {
        const store = dir === undefined ? memoryStore() : sqliteStore({ path: join(dir, `names-${n++}.db`) });
        try {
          const { seen, paused, done, loaded } = await namedRun(store, mine, other);
          expectNamed(paused.state, mine, other, 1);
          expectNamed(JSON.parse(JSON.stringify(done.state)) as RunState, mine, other, 2);
          expectNamed(loaded, mine, other, 2);
          expect(done.text).toBe('Done.');
          // The hook named `mine` reads its own state back after the resume; the other hook reads nothing.
          expect(seen.mine).toEqual([{ n: 1 }, { n: 2 }]);
          expect(seen.other).toEqual([undefined, undefined]);
          expect(seen.metadata).toEqual(['meta', 'meta']);
          // The decision under `mine` approved that call, the one under `other` denied its own.
          expect(seen.deployed).toEqual(['mine']);
          expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE_NAMES);
        } finally {
          await store.close();
        }
      }), { numRuns: kind === 'memory' ? 40 : 12 });
    }, 120_000);
  }
});

describe('a hook named __proto__ that returns { state }', () => {
  /** A rate limit that reads its own count, and trusts nothing it did not save. */
  const rateLimit = (reads: unknown[]): Hook => ({ name: 'RateLimit', beforeModel: (ctx) => void reads.push(ctx.hookState) });

  it('in the process: its state is an own key of the JSON state, and a hook with no state reads nothing of it', async () => {
    const reads: unknown[] = [];
    const attacker: Hook = { name: '__proto__', onStart: () => ({ state: { RateLimit: { calls: -1000 } } }) };
    const result = await createAgent({ model: mockModel(['Hi.']), hooks: [attacker, rateLimit(reads)] }).run('Hello');
    expect(reads).toEqual([undefined]);
    expectOwn(result.state.hookState, '__proto__', { RateLimit: { calls: -1000 } });
    expect(JSON.parse(JSON.stringify(result.state)).hookState).toEqual(own('__proto__', { RateLimit: { calls: -1000 } }));
  });

  it('in the sandbox, as a criogen Hook and through an AgentHook\'s ctx.setHookState: the same', async () => {
    const sandboxed = await sandboxedHooks([
      "export const attacker = { name: '__proto__', onStart() { return { state: { RateLimit: { calls: -1000 } } }; } };",
      "export const setter = { name: 'setter', preGenerate(ctx) { ctx.setHookState('__proto__', { RateLimit: { calls: -2000 } }); } };",
    ].join('\n'));
    try {
      const [attacker, setter] = sandboxed.hooks;
      for (const [hook, calls] of [[attacker, -1000], [setter, -2000]] as const) {
        const reads: unknown[] = [];
        const result = await createAgent({ model: mockModel(['Hi.', 'Again.']), hooks: [hook, rateLimit(reads)] }).run('Hello');
        expect(reads).toEqual([undefined]);
        expectOwn(result.state.hookState, '__proto__', { RateLimit: { calls } });
      }
    } finally {
      sandboxed.close();
    }
  });
});

describe('tool and model names in the built-in middleware', () => {
  it('tool-call-limit counts a tool named __proto__ or constructor under its own name, against its own cap', async () => {
    const ran: string[] = [];
    const tools = AWKWARD.slice(0, 2).map((tool) => defineTool({ name: tool, description: `The ${tool} tool`, execute: () => { ran.push(tool); return 'ok'; } }));
    const calls = [{ name: '__proto__' }, { name: 'constructor' }, { name: '__proto__' }];
    const limit = toolCallLimitMiddleware({ perRun: { byTool: { ...own('__proto__', 1), constructor: 5 } } });
    const result = await createAgent({ model: mockModel([{ toolCalls: calls }, 'Done.']), tools, toolConcurrency: 1 }).use(limit).run('Go');
    expect(ran).toEqual(['__proto__', 'constructor']);
    const counted = (result.state.hookState['tool-call-limit'] as { byTool: Record<string, number> }).byTool;
    expectOwn(counted, '__proto__', 1);
    expectOwn(counted, 'constructor', 1);
  });

  it('cost-budget and model-fallback keep a model named constructor or __proto__ as an own key', async () => {
    const named = (modelId: string) => Object.assign(mockModel(['Hi.']), { modelId });
    const costed = await createAgent({ model: named('constructor') })
      .use(costBudgetMiddleware({ prices: { constructor: { input: 1, output: 1 } }, runBudget: 100 }))
      .run('Hello');
    expectOwn((costed.state.hookState['cost-budget'] as { byModel: object }).byModel, 'constructor', expect.any(Number));
    const unavailable = new ProviderError({ provider: 'test', kind: 'http', status: 503, providerMessage: 'overloaded', retryable: true });
    const fellBack = await createAgent({ model: Object.assign(mockModel([{ error: unavailable }]), { modelId: 'prototype' }) })
      .use(modelFallbackMiddleware({ models: [named('__proto__')] }))
      .run('Hello');
    const byModel = (fellBack.state.hookState['model-fallback'] as { byModel: object }).byModel;
    expect(Object.keys(byModel).sort()).toEqual(['__proto__', 'prototype']);
    expectOwn(byModel, '__proto__', expect.objectContaining({ calls: 1 }));
  });
});

describe('a tool call id the model chose: constructor, __proto__', () => {
  const deploy = defineTool({ name: 'deploy', description: 'Deploys', needsApproval: true, execute: () => 'deployed' });
  const count = defineTool({ name: 'count', description: 'Counts', execute: () => 'counted' });

  it('is not taken for a human decision it never had: after a resume, a call with that id runs with no decision recorded for it', async () => {
    const records: unknown[] = [];
    const model = mockModel([{ toolCalls: [{ id: 'a', name: 'deploy' }] }, { toolCalls: [{ id: 'constructor', name: 'count' }] }, 'Done.']);
    const agent = createAgent({ model, tools: [deploy, count], onPermissionDecision: (record) => void (record.source === 'approval' && records.push([record.toolCallId, record.decision])) });
    const paused = await agent.run('Deploy, then count');
    const done = await agent.resume(paused.state, { a: true });
    expect(done.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content])).toEqual([['a', 'deployed'], ['constructor', 'counted']]);
    expect(records).toEqual([['a', 'allow']]);
  });

  it('waiting for approval, gets no answer from an object that does not have it: resume says which decision is missing', async () => {
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'constructor', name: 'deploy' }, { id: 'b', name: 'deploy' }] }]), tools: [deploy] });
    const paused = await agent.run('Deploy twice');
    await expect(agent.resume(paused.state, { b: true })).rejects.toThrow(/no decision for pending call "constructor" \(deploy\)/);
  });
});

describe('keys of values koagent copies, compares or looks up by name', () => {
  it('the layer trace keeps a __proto__ key of a value it records, and sees a constructor key come and go', () => {
    expectOwn(bounded(own('__proto__', { admin: true })) as object, '__proto__', { admin: true });
    expect(jsonChanges(own('constructor', 1), {})).toEqual([{ path: '/constructor', before: 1 }]);
    expect(jsonChanges({}, own('__proto__', 2))).toEqual([{ path: '/__proto__', after: 2 }]);
  });

  it('pii redaction redacts under a __proto__ key of a tool result and keeps it a key', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Looks up', execute: () => own('__proto__', { email: 'jane.doe@example.com' }) });
    const model = mockModel([{ toolCalls: [{ name: 'lookup' }] }, 'Done.']);
    await createAgent({ model, tools: [lookup], middleware: [piiRedactionMiddleware({ targets: ['toolResults'] })] }).run('Find her');
    expect(model.calls[1].messages.at(-1)?.content).toBe(JSON.stringify(own('__proto__', { email: '[EMAIL]' })));
  });

  it('a misspelt option named constructor or toString is named as it is, not matched with what objects inherit', () => {
    for (const key of ['constructor', 'toString']) {
      expect(() => createAgent({ model: mockModel([]), ...own(key, 1) })).toThrow(new RegExp(`createAgent: ${key} is not an option; use name, id`));
    }
  });

  it('the tool emulator emulates a tool named constructor only when given an emulator for it', async () => {
    const constructorTool = defineTool({ name: 'constructor', description: 'Builds', execute: () => 'built for real' });
    const model = mockModel([{ toolCalls: [{ name: 'constructor' }] }, 'Done.']);
    const result = await createAgent({ model, tools: [constructorTool] }).use(toolEmulatorMiddleware({ tools: ['constructor'], emulate: { other: () => 'emulated' }, model: mockModel(['"by the model"']) })).run('Build');
    expect(result.messages.find((m) => m.role === 'tool')?.content).toBe('by the model');
  });
});
