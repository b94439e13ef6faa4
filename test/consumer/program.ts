// A program written against the packed koagent as an application would write it, compiled by
// test/packaging.test.ts with the strictest options (exactOptionalPropertyTypes,
// noUncheckedIndexedAccess, skipLibCheck off) and the libraries of a Node project (ES2023 and
// Node's types, no DOM) under both nodenext and bundler resolution.
// It is not compiled with the repository (tsconfig.json excludes this folder): `koagent` here is
// the installed package, not src/.
import { z } from 'zod';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent, defineMiddleware, defineTool, deny, memoryStore, toolError, type Middleware, type RunResult, type ToolContext } from 'koagent';
import { aiSdk, type AiSdkLanguageModel } from 'koagent/ai-sdk';
import { HookRegistry, type AgentHook, type Hook } from 'koagent/hooks';
import { mcpTools, serveMcp } from 'koagent/mcp';
import { modelFallbackMiddleware, retryMiddleware, timeoutMiddleware } from 'koagent/middleware';
import { postgresStore } from 'koagent/postgres';
import { sandboxedHooks, SandboxError, type SandboxedHooks } from 'koagent/sandbox';
import { sqliteStore } from 'koagent/sqlite';
import type { RunStore } from 'koagent/store';
import type {} from 'koagent/types';
import { mockModel } from 'koagent/testing';

// An options object's type, read from its function's signature.
type PostgresStoreOptions = Parameters<typeof postgresStore>[0];
type SandboxOptions = NonNullable<Parameters<typeof sandboxedHooks>[1]>;

const weather = defineTool({
  name: 'get_weather',
  description: 'The forecast for a city',
  input: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: 'sunny' }),
});
const shell = defineTool({ name: 'shell', description: 'Runs a command', input: z.object({ cmd: z.string() }), needsApproval: true, execute: async ({ cmd }) => (cmd === '' ? toolError('validation', 'empty command') : cmd) });

const logTools = defineMiddleware({
  name: 'log-tools',
  async tool(ctx, next) {
    const outcome = await next();
    console.log(ctx.toolName, outcome.error ?? outcome.result);
    return outcome;
  },
});
const noShell: Middleware = { name: 'no-shell', tool: (ctx: ToolContext, next) => (ctx.toolName === 'shell' ? deny('no shell') : next()) };
// Fields features declare on Middleware reach a program that imports the root only.
export const held: Middleware = { name: 'redact', holdStream: true, scope: 'lead-only', model: (_ctx, next) => next() };
export const inherited = defineMiddleware({ scope: 'inherit', rawCalls: true, tool: (_ctx, next) => next() });
// @ts-expect-error a scope is 'inherit' or 'lead-only'
export const misnamed: Middleware = { scope: 'everywhere' };
const audit: AgentHook = { name: 'audit', postToolCall(ctx, r) { console.log(ctx.toolName, r.error ?? 'ok'); } };
const criogen: Hook = { name: 'trim', afterTool: (_call, result) => (typeof result === 'string' ? result.slice(0, 100) : undefined) };

const store: RunStore = memoryStore();
const agent = createAgent({
  instructions: 'You report the weather.',
  model: mockModel([{ toolCalls: [{ name: 'get_weather', args: { city: 'Paris' } }] }, 'Sunny in Paris.']),
  tools: [weather, shell],
  middleware: [logTools, retryMiddleware({ maxRetries: 2 }), timeoutMiddleware({ model: 30_000 })],
  hooks: new HookRegistry().register(audit),
  store,
});
agent.use(noShell).use(criogen).use({ name: 'inline', async tool(ctx, next) { return ctx.toolName === 'x' ? deny('x') : next(); } });
agent.use({ name: 'pre', preToolCall: (ctx) => (ctx.toolName === 'rm' ? { deny: 'no' } : undefined) });
agent.use({ name: 'start', onStart: () => undefined });
// A field that is not a function names no kind, as at run time: this is an AgentHook with a field of its own.
agent.use({ name: 'audit-shell', tool: 'shell', preToolCall: () => undefined });
class KeepModelName implements Hook { model = 'gpt-5-mini'; afterModel() { return undefined; } }
agent.use(new KeepModelName());
// @ts-expect-error a tool layer resolves to the call's outcome, not its result: this is not an AgentHook with a name either
agent.use({ name: 'unwrap', async tool(_ctx, next) { return (await next()).result; } });

export async function main(): Promise<RunResult> {
  const { text, usage } = await agent.send('Weather in Paris?');
  console.log(text, usage.inputTokens);
  for await (const event of agent.stream('Again?')) if (event.type === 'text.delta') process.stdout.write(event.delta);
  const typed = await agent.run('Typed?', { output: z.object({ answer: z.string() }) });
  console.log(typed.output?.answer);
  return agent.run('Once more');
}

// Any AI SDK v3 model fits aiSdk(), the SDK's own test model included.
const sdkModel = new MockLanguageModelV3({
  doGenerate: async () => ({
    content: [{ type: 'text', text: 'hi' }],
    finishReason: { unified: 'stop', raw: undefined },
    usage: { inputTokens: { total: 1, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: undefined, reasoning: undefined } },
    warnings: [],
  }),
});
export const sdkAgent = createAgent({ model: aiSdk(sdkModel) });
export const asModel: AiSdkLanguageModel = sdkModel;

export const mcp = createAgent({ model: mockModel(['ok']), tools: [mcpTools({ name: 'fs', command: 'npx', args: ['-y', 'server'] })] });
export const served = serveMcp(agent, { expose: 'tools' });
export const durable = createAgent({ model: mockModel(['ok']), store: sqliteStore({ path: 'runs.db' }) });
const pgOptions: PostgresStoreOptions = { connectionString: 'postgres://localhost/db', poolConfig: { max: 4 } };
export const pgStore = postgresStore(pgOptions);

// Hooks from source text, sandboxed: their objects go to the agent as any hook does.
const sandboxOptions: SandboxOptions = { thread: 'worker', timeoutMs: 200, memoryMb: 32, log: (...args) => console.log(...args), functions: { price: async (sku: string) => ({ sku, cents: 250 }) } };
export async function sandboxedAgent(source: string): Promise<SandboxedHooks> {
  const sandboxed = await sandboxedHooks(source, sandboxOptions);
  createAgent({ model: mockModel(['ok']), hooks: sandboxed.hooks }).use(criogen);
  createAgent({ model: mockModel(['ok']), hooks: sandboxed.registry() });
  return sandboxed;
}
export const overTime = (error: unknown): boolean => error instanceof SandboxError && error.limit === 'timeoutMs';
// @ts-expect-error the engine runs on a worker thread or inline, nowhere else
export const elsewhere: SandboxOptions = { thread: 'process' };

// The built-ins' events are typed once koagent/middleware is imported, and a program's own
// middleware declares its events the same way (in a file that imports koagent/types, so that
// TypeScript finds the module it adds to): listeners narrow them with no cast.
declare module 'koagent/types' {
  interface MiddlewareEvents {
    'consumer.audited': { toolName: string; allowed: boolean };
  }
}
const auditEvents: Middleware = {
  name: 'audit-events',
  tool: (ctx, next) => {
    ctx.emit?.({ type: 'consumer.audited', toolName: ctx.toolName, allowed: true });
    // @ts-expect-error a declared event carries its fields
    ctx.emit?.({ type: 'consumer.audited', toolName: ctx.toolName });
    return next();
  },
};
export const watched = createAgent({
  model: mockModel(['ok']),
  middleware: [modelFallbackMiddleware({ models: [mockModel(['ok'])] }), auditEvents],
  onEvent: (e) => {
    if (e.type === 'model.fallback') console.log(e.from, e.to, e.attempt, e.message);
    if (e.type === 'consumer.audited') console.log(e.toolName, e.allowed);
    // @ts-expect-error no event has this type
    if (e.type === 'model.fallbak') console.log(e);
  },
});
