// OpenTelemetry spans (src/tracing.ts), checked with the SDK's in-memory exporter: a span per
// run segment, per model call and per tool call, named and attributed after the GenAI semantic
// conventions, and parented explicitly, across sub-agents and concurrent tool calls.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, ParentBasedSampler, SamplingDecision, SimpleSpanProcessor, type ReadableSpan, type Sampler } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAgent, defineTool, type Middleware, type ModelProvider } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { add, rejection } from '../support/core.js';
import { nextTurn } from '../support/waits.js';

let exporter = new InMemorySpanExporter();
const register = (sampler?: Sampler) => {
  exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)], ...(sampler ? { sampler } : {}) }));
};

beforeAll(() => register());
// The global provider can be set once per process; leave none behind for other test files.
afterAll(() => trace.disable());
beforeEach(() => exporter.reset());

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const one = (name: string): ReadableSpan => {
  const found = named(name);
  expect(found, `spans named ${name}`).toHaveLength(1);
  return found[0];
};
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;

/** A lead that calls a slow tool and a researcher sub-agent in one turn; the tool waits until the researcher has worked. */
function concurrentTeam() {
  let researched!: () => void;
  const researchDone = new Promise<void>((resolve) => (researched = resolve));
  const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ query: z.string() }), execute: ({ query }) => { researched(); return `results for ${query}`; } });
  // Waits for the sub-agent's tool: only concurrent calls can both finish.
  const clock = defineTool({ name: 'clock', description: 'The time', input: z.object({}), execute: async () => { await researchDone; return '12:00'; } });
  const researcher = createAgent({
    name: 'researcher',
    model: mockModel([{ toolCalls: [{ name: 'search', args: { query: 'otters' } }], usage: { inputTokens: 3, outputTokens: 2 } }, { text: 'Otters hold hands.', usage: { inputTokens: 4, outputTokens: 5 } }]),
    tools: [search],
  });
  const lead = createAgent({
    name: 'lead',
    modelSettings: { temperature: 0.3, maxTokens: 256 },
    model: mockModel([
      { toolCalls: [{ name: 'clock', id: 'call_clock' }, { name: 'researcher', args: { task: 'Otters' }, id: 'call_researcher' }], usage: { inputTokens: 10, outputTokens: 6 } },
      { text: 'At noon: otters hold hands.', usage: { inputTokens: 20, outputTokens: 7 } },
    ]),
    tools: [clock, researcher.asTool({ description: 'Researches' })],
  });
  return lead;
}

describe('span parentage', () => {
  it('in a run with a sub-agent and two concurrent tool calls', async () => {
    const result = await concurrentTeam().run('What time is it, and what about otters?');
    expect(result.text).toBe('At noon: otters hold hands.');

    const leadRun = one('invoke_agent lead');
    const subRun = one('invoke_agent researcher');
    const clock = one('execute_tool clock');
    const delegate = one('execute_tool researcher');
    const search = one('execute_tool search');
    const chats = named('chat mock');
    expect(chats).toHaveLength(4);
    expect(spans()).toHaveLength(9);

    // One trace; the lead's run span is its root.
    expect(new Set(spans().map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(leadRun.parentSpanContext).toBeUndefined();
    // The two tool calls are siblings under the run span, though they ran at the same time.
    expect(parentOf(clock)).toBe(idOf(leadRun));
    expect(parentOf(delegate)).toBe(idOf(leadRun));
    // The sub-agent's run hangs under the tool call that ran it; its own calls under its run.
    expect(parentOf(subRun)).toBe(idOf(delegate));
    expect(parentOf(search)).toBe(idOf(subRun));
    const chatParents = chats.map(parentOf);
    expect(chatParents.filter((p) => p === idOf(leadRun))).toHaveLength(2);
    expect(chatParents.filter((p) => p === idOf(subRun))).toHaveLength(2);
  });

  it('keeps two runs at once apart: each run\'s calls hang under its own run span', async () => {
    // Each reply a turn of the event loop later, so the two runs' calls interleave.
    const later = (model: ModelProvider): ModelProvider => ({ ...model, generate: async (request) => (await nextTurn(), model.generate(request)) });
    const agentA = createAgent({ name: 'a', model: later(mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }, 'A.'])), tools: [add] });
    const agentB = createAgent({ name: 'b', model: later(mockModel([{ toolCalls: [{ name: 'add', args: { a: 2, b: 2 } }] }, 'B.'])), tools: [add] });
    await Promise.all([agentA.run('Go'), agentB.run('Go')]);
    for (const name of ['a', 'b']) {
      const run = one(`invoke_agent ${name}`);
      const children = spans().filter((s) => parentOf(s) === idOf(run));
      expect(children.map((s) => s.name).sort()).toEqual(['chat mock', 'chat mock', 'execute_tool add']);
      expect(children.every((s) => s.spanContext().traceId === run.spanContext().traceId)).toBe(true);
    }
    expect(one('invoke_agent a').spanContext().traceId).not.toBe(one('invoke_agent b').spanContext().traceId);
  });

  it('opens a new run span for each segment, naming the segment and the run', async () => {
    const deploy = defineTool({ name: 'deploy', description: 'Deploys', input: z.object({}), needsApproval: true, execute: () => 'deployed' });
    const agent = createAgent({ name: 'ops', model: mockModel([{ toolCalls: [{ name: 'deploy' }] }, 'Deployed.']), tools: [deploy] });
    const first = await agent.run('Deploy');
    await agent.resume(first.state, { [first.pendingApprovals[0].toolCallId]: true });
    const runs = named('invoke_agent ops');
    expect(runs.map((s) => [s.attributes['koagent.run.segment'], s.attributes['koagent.run.status'], s.attributes['koagent.run.stop_reason']])).toEqual([[1, 'suspended', 'approval'], [2, 'completed', 'final']]);
    expect(runs.every((s) => s.attributes['koagent.run.id'] === first.runId)).toBe(true);
    // The call that waited says so on its span (segment 1); its execution is a plain span of segment 2.
    const deploys = named('execute_tool deploy');
    expect(deploys.map((s) => [parentOf(s) === idOf(runs[0]) ? 1 : 2, s.attributes['koagent.tool.approval_requested']])).toEqual([[1, true], [2, undefined]]);
  });
});

describe('sampling', () => {
  it('a lead run that is sampled out takes its sub-agents with it: no stray root trace for them', async () => {
    // Roots named after the lead are dropped; every other span follows its parent's decision.
    const dropLead: Sampler = { shouldSample: (_ctx, _trace, name) => ({ decision: name === 'invoke_agent lead' ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED }), toString: () => 'drop-lead' };
    trace.disable();
    register(new ParentBasedSampler({ root: dropLead }));
    try {
      expect((await concurrentTeam().run('Go')).text).toBe('At noon: otters hold hands.');
      expect(spans().map((s) => s.name)).toEqual([]);
    } finally {
      trace.disable();
      register();
    }
  });
});

describe('span names and attributes (GenAI semantic conventions)', () => {
  it('a run span: invoke_agent <agent>, with the agent, conversation and how the segment ended', async () => {
    const result = await concurrentTeam().run('Go');
    const run = one('invoke_agent lead');
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'lead',
      'gen_ai.agent.id': 'lead',
      'gen_ai.conversation.id': result.sessionId,
      'koagent.run.id': result.runId,
      'koagent.run.segment': 1,
      'koagent.run.status': 'completed',
      'koagent.run.stop_reason': 'final',
    });
  });

  it('a model call span: chat <model>, with operation, provider, model, settings, token usage and finish reason', async () => {
    await concurrentTeam().run('Go');
    const leadRun = one('invoke_agent lead');
    const leadChats = named('chat mock').filter((s) => parentOf(s) === idOf(leadRun));
    expect(leadChats[0].kind).toBe(SpanKind.CLIENT);
    expect(leadChats.map((s) => s.attributes)).toEqual([
      { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'mockModel', 'gen_ai.request.model': 'mock', 'gen_ai.request.temperature': 0.3, 'gen_ai.request.max_tokens': 256, 'koagent.call.purpose': 'turn', 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 6, 'gen_ai.response.finish_reasons': ['tool_calls'] },
      { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'mockModel', 'gen_ai.request.model': 'mock', 'gen_ai.request.temperature': 0.3, 'gen_ai.request.max_tokens': 256, 'koagent.call.purpose': 'turn', 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 7, 'gen_ai.response.finish_reasons': ['stop'] },
    ]);
  });

  it('a tool call span: execute_tool <tool>, with the tool name and call id', async () => {
    await concurrentTeam().run('Go');
    expect(one('execute_tool clock').attributes).toEqual({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'clock', 'gen_ai.tool.call.id': 'call_clock' });
    expect(one('execute_tool researcher').attributes['gen_ai.tool.call.id']).toBe('call_researcher');
    expect(one('execute_tool clock').status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a tool call that settles with an error: error.type is the error kind, and the status is an error', async () => {
    const noShell: Middleware = { name: 'no-shell', tool: async (ctx, next) => (ctx.args.a === 666 ? { result: undefined, error: { kind: 'denied', message: 'not that number' } } : next()) };
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 'one', b: 2 } }, { name: 'add', args: { a: 666, b: 1 } }, { name: 'nope' }] }, 'Done.']);
    await createAgent({ model, tools: [add], middleware: [noShell] }).run('Go');
    const byKind = named('execute_tool add').map((s) => [s.attributes['error.type'], s.status.code]);
    expect(byKind).toEqual([['validation', SpanStatusCode.ERROR], ['denied', SpanStatusCode.ERROR]]);
    expect(one('execute_tool nope').attributes['error.type']).toBe('not_found');
    expect(one('execute_tool nope').status.message).toMatch(/There is no tool named "nope"/);
  });

  it('a side call span carries koagent.call.purpose (ctx.generate, and the compaction summary)', async () => {
    const classify: Middleware = { name: 'classify', async model(ctx, next) { await ctx.generate({ provider: mockModel(['safe']), messages: [{ role: 'user', content: 'Is this safe?' }] }, 'classify'); return next(); } };
    const model = mockModel([{ toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] }, { toolCalls: [{ name: 'add', args: { a: 2, b: 2 } }] }, 'Done.']);
    await createAgent({ name: 'careful', model, tools: [add], middleware: [classify], compaction: { maxMessages: 4, keepRecent: 1, model: mockModel(['a summary']) } }).run('Go');
    const run = one('invoke_agent careful');
    const purposes = named('chat mock').map((s) => [s.attributes['koagent.call.purpose'], parentOf(s) === idOf(run)]);
    expect(purposes.filter(([p]) => p === 'classify')).toEqual([['classify', true], ['classify', true], ['classify', true]]);
    expect(purposes.filter(([p]) => p === 'compaction')).toEqual([['compaction', true]]);
    expect(purposes.filter(([p]) => p === 'turn')).toHaveLength(3);
  });

  it('a failed model call and the failed run: error.type and an error status on both', async () => {
    await rejection(createAgent({ name: 'doomed', model: mockModel([{ error: 'upstream 500' }]) }).run('Go'));
    const chat = one('chat mock');
    expect(chat.attributes['error.type']).toBe('Error');
    expect(chat.status).toEqual({ code: SpanStatusCode.ERROR, message: 'upstream 500' });
    const run = one('invoke_agent doomed');
    expect(run.attributes).toMatchObject({ 'error.type': 'model_error', 'koagent.run.status': 'failed' });
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('without an SDK', () => {
  it('records nothing when the application has no tracer provider, and picks up one registered later', async () => {
    trace.disable();
    const before = exporter;
    const result = await concurrentTeam().run('Go');
    expect(result.text).toBe('At noon: otters hold hands.');
    expect(before.getFinishedSpans()).toHaveLength(0);

    register();
    await createAgent({ name: 'again', model: mockModel(['Hi.']) }).run('Go');
    expect(spans().map((s) => s.name).sort()).toEqual(['chat mock', 'invoke_agent again']);
  });
});
