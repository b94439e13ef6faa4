// Sub-agents (src/subagent.ts): an agent given to another as a tool. Inside it the lead's
// layers run too (outermost, unless `lead-only`), contexts say where they are (`ctx.subagent`),
// usage and events flow up to the lead, and an approval pause inside it pauses the lead.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, memoryStore, type AgentEvent, type Middleware, type RunState } from '../../../src/index.js';
import type { AgentHook, Hook } from '../../../src/hooks.js';
import type { SubagentInfo } from '../../../src/api.js';
import { mockModel, type MockReply } from '../../../src/testing/index.js';
import { mapText } from '../../../src/core/vocabulary/content.js';
import { manualClock } from '../../support/clock.js';

function searchTool(log: string[] = []) {
  return defineTool({
    name: 'search',
    description: 'Searches the web',
    input: z.object({ query: z.string() }),
    execute: ({ query }) => {
      log.push(query);
      return `results for ${query}`;
    },
  });
}

/** A researcher sub-agent with its own scripted model, and a lead that delegates to it once. */
function team(options: { researcher?: MockReply[]; lead?: MockReply[]; leadMiddleware?: Middleware[]; researcherMiddleware?: Middleware[]; hooks?: (AgentHook | Hook)[]; tools?: ReturnType<typeof defineTool>[] } = {}) {
  const researcherModel = mockModel(options.researcher ?? [{ toolCalls: [{ name: 'search', args: { query: 'otters' } }], usage: { inputTokens: 3, outputTokens: 1 } }, { text: 'Otters hold hands.', usage: { inputTokens: 3, outputTokens: 1 } }]);
  const researcher = createAgent({ name: 'researcher', instructions: 'You research.', model: researcherModel, tools: options.tools ?? [searchTool()], middleware: options.researcherMiddleware });
  const leadModel = mockModel(options.lead ?? [{ toolCalls: [{ name: 'researcher', args: { task: 'Find otter facts' } }], usage: { inputTokens: 10, outputTokens: 5 } }, { text: 'Otters hold hands while they sleep.', usage: { inputTokens: 10, outputTokens: 5 } }]);
  const lead = createAgent({ name: 'lead', model: leadModel, tools: [researcher.asTool({ description: 'Researches a topic' })], middleware: options.leadMiddleware, hooks: options.hooks });
  return { lead, researcher, leadModel, researcherModel };
}

type Seen = { point: string; tool?: string; subagent?: SubagentInfo; runId: string };

describe('inherited hooks and middleware see the sub-agent\'s calls, with ctx.subagent set', () => {
  it('a lead AgentHook sees the sub-agent\'s tool calls and model calls, with name, depth 1, parent run id and path', async () => {
    const seen: Seen[] = [];
    const audit: AgentHook = {
      name: 'audit',
      preToolCall: (ctx) => void seen.push({ point: 'preToolCall', tool: ctx.toolName, subagent: ctx.subagent, runId: ctx.runId }),
      preGenerate: (ctx) => void seen.push({ point: 'preGenerate', subagent: ctx.subagent, runId: ctx.runId }),
    };
    const { lead } = team({ hooks: [audit] });
    const result = await lead.run('Tell me about otters');
    const inside = { name: 'researcher', depth: 1, parentRunId: result.runId, path: ['lead', 'researcher'] };
    expect(seen.map(({ point, tool, subagent }) => ({ point, tool, subagent }))).toEqual([
      { point: 'preGenerate', tool: undefined, subagent: undefined },
      { point: 'preToolCall', tool: 'researcher', subagent: undefined },
      { point: 'preGenerate', tool: undefined, subagent: inside },
      { point: 'preToolCall', tool: 'search', subagent: inside },
      { point: 'preGenerate', tool: undefined, subagent: inside },
      { point: 'preGenerate', tool: undefined, subagent: undefined },
    ]);
    // The sub-agent's run is a run of its own.
    const childRunIds = new Set(seen.filter((s) => s.subagent).map((s) => s.runId));
    expect(childRunIds.size).toBe(1);
    expect(childRunIds.has(result.runId)).toBe(false);
  });

  it('native middleware on all three stacks and a criogen Hook run inside the sub-agent too', async () => {
    const seen: string[] = [];
    const where = (ctx: { subagent?: SubagentInfo }) => ctx.subagent?.path.join('>') ?? 'lead';
    const native: Middleware = {
      name: 'native',
      run: (ctx, next) => { seen.push(`run @${where(ctx)}`); return next(); },
      model: (ctx, next) => { seen.push(`model @${where(ctx)}`); return next(); },
      tool: (ctx, next) => { seen.push(`tool ${ctx.toolName} @${where(ctx)}`); return next(); },
    };
    const hook: Hook = { name: 'criogen', beforeTool: (call) => void seen.push(`beforeTool ${call.name}`), onEnd: (_ctx, outcome) => void seen.push(`onEnd ${outcome}`) };
    const { lead } = team({ leadMiddleware: [native], hooks: [hook] });
    await lead.run('Otters?');
    expect(seen).toEqual([
      'run @lead', 'model @lead', 'tool researcher @lead', 'beforeTool researcher',
      'run @lead>researcher', 'model @lead>researcher', 'tool search @lead>researcher', 'beforeTool search', 'model @lead>researcher', 'onEnd completed',
      'model @lead', 'onEnd completed',
    ]);
  });

  it('runs the lead\'s layers outermost, around the sub-agent\'s own', async () => {
    const order: string[] = [];
    const layer = (name: string): Middleware => ({ name, tool: async (ctx, next) => { order.push(`${name} in ${ctx.toolName}`); const out = await next(); order.push(`${name} out ${ctx.toolName}`); return out; } });
    const { lead } = team({ leadMiddleware: [layer('lead-layer')], researcherMiddleware: [layer('own-layer')] });
    await lead.run('Otters?');
    expect(order).toEqual(['lead-layer in researcher', 'lead-layer in search', 'own-layer in search', 'own-layer out search', 'lead-layer out search', 'lead-layer out researcher']);
  });

  it('a scope: "lead-only" layer runs in the lead agent but not inside its sub-agents', async () => {
    const seen: string[] = [];
    const leadOnly: Middleware = { name: 'lead-only', scope: 'lead-only', tool: (ctx, next) => { seen.push(`lead-only ${ctx.toolName}`); return next(); }, model: (ctx, next) => { seen.push(`lead-only model @${ctx.agentName}`); return next(); } };
    const inherited: Middleware = { name: 'inherited', scope: 'inherit', tool: (ctx, next) => { seen.push(`inherited ${ctx.toolName}`); return next(); } };
    const { lead } = team({ leadMiddleware: [leadOnly, inherited] });
    await lead.run('Otters?');
    expect(seen).toEqual(['lead-only model @lead', 'lead-only researcher', 'inherited researcher', 'inherited search', 'lead-only model @lead']);
  });

  it('nests: depth 2, the parent run id of the middle agent, the full path, and each level\'s lead-only layers stay home', async () => {
    const seen: string[] = [];
    const spy = (name: string, scope?: 'lead-only'): Middleware => ({ name, scope, tool: (ctx, next) => { seen.push(`${name}: ${ctx.toolName} ${JSON.stringify(ctx.subagent ?? null)}`); return next(); } });
    const leaf = createAgent({ name: 'leaf', model: mockModel([{ toolCalls: [{ name: 'search', args: { query: 'deep' } }] }, 'Leaf done.']), tools: [searchTool()] });
    const midRunIds: string[] = [];
    const mid = createAgent({ name: 'mid', model: mockModel([{ toolCalls: [{ name: 'leaf', args: { task: 'Dig' } }] }, 'Mid done.']), tools: [leaf.asTool({ description: 'Digs' })], middleware: [spy('mid-home', 'lead-only'), { name: 'mid-run', run: (ctx, next) => { midRunIds.push(ctx.runId); return next(); } }] });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ name: 'mid', args: { task: 'Delegate' } }] }, 'Lead done.']), tools: [mid.asTool({ description: 'Delegates' })], middleware: [spy('lead-home', 'lead-only'), spy('everywhere')] });
    const result = await lead.run('Go');
    expect(result.text).toBe('Lead done.');
    const midInfo = JSON.stringify({ name: 'mid', depth: 1, parentRunId: result.runId, path: ['lead', 'mid'] });
    const leafInfo = JSON.stringify({ name: 'leaf', depth: 2, parentRunId: midRunIds[0], path: ['lead', 'mid', 'leaf'] });
    expect(seen).toEqual([
      'lead-home: mid null', 'everywhere: mid null',
      `everywhere: leaf ${midInfo}`, `mid-home: leaf ${midInfo}`,
      `everywhere: search ${leafInfo}`,
    ]);
  });
});

describe('what flows up to the lead', () => {
  it('adds the sub-agent\'s usage to the lead\'s', async () => {
    const { lead } = team();
    const { usage } = await lead.run('Otters?');
    // Lead: 2 calls of 10 + 5 and one tool call; researcher: 2 calls of 3 + 1 and one tool call.
    expect(usage).toEqual({ inputTokens: 26, outputTokens: 12, totalTokens: 38, modelCalls: 4, toolCalls: 2 });
  });

  it('adds the sub-agent\'s cache reads and writes to the lead\'s', async () => {
    const { lead } = team({
      researcher: [
        { toolCalls: [{ name: 'search', args: { query: 'otters' } }], usage: { inputTokens: 300, outputTokens: 1, cacheWriteInputTokens: 280 } },
        { text: 'Otters hold hands.', usage: { inputTokens: 320, outputTokens: 1, cachedInputTokens: 280, cacheWriteInputTokens: 30 } },
      ],
      lead: [
        { toolCalls: [{ name: 'researcher', args: { task: 'Find otter facts' } }], usage: { inputTokens: 100, outputTokens: 5, cacheWriteInputTokens: 90 } },
        { text: 'Otters hold hands while they sleep.', usage: { inputTokens: 110, outputTokens: 5, cachedInputTokens: 90 } },
      ],
    });
    const { usage } = await lead.run('Otters?');
    expect(usage).toMatchObject({ inputTokens: 830, cachedInputTokens: 370, cacheWriteInputTokens: 400 });
  });

  it('sends the sub-agent\'s events to the lead\'s listeners, tagged with agentPath, while the lead\'s call is open', async () => {
    const events: AgentEvent[] = [];
    const { lead } = team();
    const result = await lead.run('Otters?', { onEvent: (e) => events.push(e) });
    const tagged = events.filter((e) => e.agentPath !== undefined);
    expect(tagged.map((e) => e.type)).toEqual(['run.start', 'model.start', 'model.done', 'tool.start', 'tool.done', 'model.start', 'model.done', 'run.end']);
    for (const e of tagged) expect(e.agentPath).toEqual(['lead', 'researcher']);
    expect(new Set(tagged.map((e) => e.runId)).size).toBe(1);
    expect(tagged[0].runId).not.toBe(result.runId);
    expect(events.filter((e) => e.agentPath === undefined).every((e) => e.runId === result.runId)).toBe(true);
    const open = events.findIndex((e) => e.type === 'tool.start' && e.toolName === 'researcher');
    const close = events.findIndex((e) => e.type === 'tool.done' && e.toolName === 'researcher');
    expect(events.slice(open + 1, close)).toEqual(tagged);
  });

  it('streams the sub-agent\'s text into the lead\'s stream, tagged', async () => {
    const { lead } = team();
    const deltas: { delta: string; agentPath?: string[] }[] = [];
    for await (const e of lead.stream('Otters?')) if (e.type === 'text.delta') deltas.push({ delta: e.delta, agentPath: e.agentPath });
    expect(deltas.filter((d) => d.agentPath !== undefined).map((d) => d.delta).join('')).toBe('Otters hold hands.');
    expect(deltas.filter((d) => d.agentPath === undefined).map((d) => d.delta).join('')).toBe('Otters hold hands while they sleep.');
  });

  it('an inherited holdStream layer holds the sub-agent\'s text as well: its secret reaches no consumer', async () => {
    const secret = 'ssn-078-05-1120';
    const redact: Middleware = { name: 'redact', holdStream: true, async model(_ctx, next) { const r = await next(); return { ...r, message: { ...r.message, content: mapText(r.message.content, (t) => t.replaceAll(secret, '[redacted]')) } }; } };
    const { lead } = team({ leadMiddleware: [redact], researcher: [`The number is ${secret}.`], lead: [{ toolCalls: [{ name: 'researcher', args: { task: 'Find it' } }] }, 'Found it.'] });
    const events: AgentEvent[] = [];
    for await (const e of lead.stream('Find the number')) events.push(e);
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(events.find((e) => e.type === 'tool.done')).toMatchObject({ toolName: 'researcher', result: 'The number is [redacted].' });
  });

  it('hands the task to the sub-agent as its user message, and its final text back as the result', async () => {
    const { lead, researcherModel, leadModel } = team();
    await lead.run('Otters?');
    expect(researcherModel.calls[0].messages).toEqual([{ role: 'system', content: 'You research.' }, { role: 'user', content: 'Find otter facts' }]);
    expect(leadModel.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', name: 'researcher', content: 'Otters hold hands.' });
  });

  it('a sub-agent run that fails is a tool error the lead\'s model reads; the lead goes on', async () => {
    const { lead, leadModel } = team({ researcher: [{ error: 'researcher model is down' }] });
    const result = await lead.run('Otters?');
    expect(result.text).toBe('Otters hold hands while they sleep.');
    const message = leadModel.calls[1].messages.at(-1);
    expect(message?.role).toBe('tool');
    expect(message?.content).toMatch(/^Error \(execution\): .*researcher model is down/);
  });

  it('counts what a failed sub-agent run used before it failed', async () => {
    const { lead } = team({ researcher: [{ toolCalls: [{ name: 'search', args: { query: 'otters' } }], usage: { inputTokens: 3, outputTokens: 1 } }, { error: 'researcher model is down' }] });
    const { usage } = await lead.run('Otters?');
    // The sub-agent's failed call counts as a call, with no tokens.
    expect(usage).toEqual({ inputTokens: 23, outputTokens: 11, totalTokens: 34, modelCalls: 4, toolCalls: 2 });
  });

  it('is cancelled with the lead: aborting the lead aborts the sub-agent\'s running tool', async () => {
    const controller = new AbortController();
    const log = { aborted: 0 };
    const hang = defineTool({
      name: 'search', description: 'Hangs', input: z.object({ query: z.string() }),
      execute: (_args, ctx) => new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => { log.aborted++; reject(ctx.signal.reason); }, { once: true });
        controller.abort('lead cancelled');
      }),
    });
    const { lead } = team({ tools: [hang] });
    const result = await lead.run('Otters?', { signal: controller.signal });
    expect(log.aborted).toBe(1);
    expect(result.stopReason).toBe('aborted');
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', name: 'researcher', metadata: { error: { kind: 'aborted' } } });
  });
});

describe('approval inside a sub-agent', () => {
  function publishing(log: string[]) {
    const publish = defineTool({ name: 'publish', description: 'Publishes', input: z.object({ title: z.string() }), needsApproval: true, execute: ({ title }) => { log.push(title); return `published ${title}`; } });
    const researcherScript: MockReply[] = [{ toolCalls: [{ name: 'publish', args: { title: 'Otters' } }] }, 'Published the otter piece.'];
    const leadScript: MockReply[] = [{ toolCalls: [{ name: 'researcher', args: { task: 'Publish about otters' } }] }, 'All done.'];
    return { publish, researcherScript, leadScript };
  }

  it('suspends the lead with the sub-agent\'s call, its id prefixed by the lead\'s call id', async () => {
    const log: string[] = [];
    const { publish, researcherScript, leadScript } = publishing(log);
    const { lead } = team({ tools: [publish], researcher: researcherScript, lead: leadScript });
    const result = await lead.run('Publish');
    expect(result.status).toBe('suspended');
    expect(result.stopReason).toBe('approval');
    expect(result.pendingApprovals).toEqual([{ toolCallId: 'call_1/call_1', toolName: 'publish', args: { title: 'Otters' }, path: ['researcher'] }]);
    expect(result.state.children.call_1.state).toMatchObject({ agentName: 'researcher', status: 'suspended' });
    expect(log).toEqual([]);
  });

  it('the lead announces the pause with approval.requested under the prefixed id that resume takes', async () => {
    const { publish, researcherScript, leadScript } = publishing([]);
    const events: AgentEvent[] = [];
    const researcher = createAgent({ name: 'researcher', model: mockModel(researcherScript), tools: [publish] });
    const lead = createAgent({ name: 'lead', model: mockModel(leadScript), tools: [researcher.asTool({ description: 'Researches' })], onEvent: (e) => events.push(e) });
    const result = await lead.run('Publish');
    const asked = events.filter((e) => e.type === 'approval.requested').map((e) => ({ id: (e as { toolCallId: string }).toolCallId, from: e.agentPath }));
    expect(asked).toEqual([{ id: 'call_1', from: ['lead', 'researcher'] }, { id: 'call_1/call_1', from: undefined }]);
    expect(result.pendingApprovals.map((p) => p.toolCallId)).toEqual(['call_1/call_1']);
  });

  it('resume reaches the sub-agent through a JSON round trip, with fresh agent objects, and finishes both', async () => {
    const log: string[] = [];
    const first = publishing(log);
    const suspended = await team({ tools: [first.publish], researcher: first.researcherScript, lead: first.leadScript }).lead.run('Publish');
    const stored = JSON.parse(JSON.stringify(suspended.state)) as RunState;

    // As a new process would: the same agents built again, their models scripted for what is left.
    const again = publishing(log);
    const fresh = team({ tools: [again.publish], researcher: again.researcherScript.slice(1), lead: again.leadScript.slice(1) });
    const events: AgentEvent[] = [];
    const done = await fresh.lead.resume(stored, { 'call_1/call_1': true }, { onEvent: (e) => events.push(e) });
    expect(log).toEqual(['Otters']);
    expect(done).toMatchObject({ status: 'completed', stopReason: 'final', text: 'All done.' });
    expect(done.state.children).toEqual({});
    expect(fresh.leadModel.calls[0].messages.at(-1)).toMatchObject({ role: 'tool', name: 'researcher', content: 'Published the otter piece.' });
    expect(fresh.researcherModel.calls[0].messages.at(-1)).toMatchObject({ role: 'tool', name: 'publish', content: 'published Otters' });
    // The sub-agent's resumed segment reports itself, tagged.
    expect(events.find((e) => e.type === 'run.start' && e.agentPath !== undefined)).toMatchObject({ resumed: true, segment: 2 });
  });

  it('marks the lead\'s re-run of the suspended call resumedAfterApproval, so a hook can skip the re-fire', async () => {
    const { publish, researcherScript, leadScript } = publishing([]);
    const fired: string[] = [];
    const counter: AgentHook = { name: 'counter', preToolCall: (ctx) => void fired.push(`${ctx.subagent?.name ?? 'lead'}:${ctx.toolName}:${ctx.resumedAfterApproval}`) };
    const { lead } = team({ tools: [publish], researcher: researcherScript, lead: leadScript, hooks: [counter] });
    const suspended = await lead.run('Publish');
    await lead.resume(suspended.state, { 'call_1/call_1': true });
    expect(fired).toEqual(['lead:researcher:false', 'researcher:publish:false', 'lead:researcher:true', 'researcher:publish:true']);
  });

  it('a denial reaches the sub-agent: its call is denied, and both runs finish', async () => {
    const log: string[] = [];
    const { publish, leadScript } = publishing(log);
    const { lead, researcherModel } = team({ tools: [publish], researcher: [{ toolCalls: [{ name: 'publish', args: { title: 'Otters' } }] }, 'Not published.'], lead: leadScript });
    const suspended = await lead.run('Publish');
    const done = await lead.resume(suspended.state, { 'call_1/call_1': { approved: false, reason: 'not today' } });
    expect(done.text).toBe('All done.');
    expect(log).toEqual([]);
    expect(researcherModel.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', metadata: { error: { kind: 'denied', message: 'not today' } } });
  });

  it('suspends through two levels, and resume routes the decision down both', async () => {
    const log: string[] = [];
    const { publish } = publishing(log);
    const leaf = createAgent({ name: 'leaf', model: mockModel([{ toolCalls: [{ name: 'publish', args: { title: 'Deep' } }] }, 'Leaf published.']), tools: [publish] });
    const mid = createAgent({ name: 'mid', model: mockModel([{ toolCalls: [{ name: 'leaf', args: { task: 'Publish' } }] }, 'Mid done.']), tools: [leaf.asTool({ description: 'Publishes' })] });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ name: 'mid', args: { task: 'Delegate' } }] }, 'Lead done.']), tools: [mid.asTool({ description: 'Delegates' })] });
    const suspended = await lead.run('Go');
    expect(suspended.pendingApprovals).toEqual([{ toolCallId: 'call_1/call_1/call_1', toolName: 'publish', args: { title: 'Deep' }, path: ['mid', 'leaf'] }]);
    const done = await lead.resume(JSON.parse(JSON.stringify(suspended.state)), { 'call_1/call_1/call_1': true });
    expect(done.text).toBe('Lead done.');
    expect(log).toEqual(['Deep']);
  });

  it('lists two sub-agents\' approvals of one turn under distinct ids, also when one lead call\'s id starts with the other\'s', async () => {
    const log: string[] = [];
    const { publish } = publishing(log);
    // Under lead call "a" the first writer's call "b/c", under lead call "a/b" the second's call "c": both would be "a/b/c".
    const first = createAgent({ name: 'first', model: mockModel([{ toolCalls: [{ id: 'b/c', name: 'publish', args: { title: 'One' } }] }, 'First done.']), tools: [publish] });
    const second = createAgent({ name: 'second', model: mockModel([{ toolCalls: [{ id: 'c', name: 'publish', args: { title: 'Two' } }] }, 'Second done.']), tools: [publish] });
    const lead = createAgent({
      name: 'lead',
      model: mockModel([{ toolCalls: [{ id: 'a', name: 'first', args: { task: 'One' } }, { id: 'a/b', name: 'second', args: { task: 'Two' } }] }, 'Both done.']),
      tools: [first.asTool({ description: 'Publishes one' }), second.asTool({ description: 'Publishes two' })],
    });
    const suspended = await lead.run('Publish both');
    const ids = suspended.pendingApprovals.map((p) => p.toolCallId);
    expect([...ids].sort()).toEqual(['a/b/c', 'a/b/c#2']);
    expect(Object.fromEntries(Object.entries(suspended.state.children).map(([call, nested]) => [call, Object.values(nested.approvals)]))).toEqual({ a: ['b/c'], 'a/b': ['c'] });
    const done = await lead.resume(JSON.parse(JSON.stringify(suspended.state)), Object.fromEntries(ids.map((id) => [id, true])));
    expect(done.text).toBe('Both done.');
    expect(log.sort()).toEqual(['One', 'Two']);
  });

  it('keeps the decisions on a sub-agent\'s approvals in the lead\'s state under the listed ids, used up with its run', async () => {
    const log: string[] = [];
    const { publish } = publishing(log);
    // The sub-agent asks twice, one call after the other: the lead suspends twice.
    const researcher = createAgent({ name: 'researcher', model: mockModel([{ toolCalls: [{ name: 'publish', args: { title: 'One' } }] }, { toolCalls: [{ name: 'publish', args: { title: 'Two' } }] }, 'Published both.']), tools: [publish] });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ name: 'researcher', args: { task: 'Publish' } }] }, 'All done.']), tools: [researcher.asTool({ description: 'Publishes' })] });
    const first = await lead.run('Publish');
    expect(first.pendingApprovals.map((p) => p.toolCallId)).toEqual(['call_1/call_1']);
    const second = await lead.resume(first.state, { 'call_1/call_1': { approved: true, reason: 'fine' } });
    expect(second.pendingApprovals.map((p) => p.toolCallId)).toEqual(['call_1/call_2']);
    expect(second.state.children.call_1.approvals).toEqual({ 'call_1/call_2': 'call_2' });
    // The first decision went to the sub-agent, and went with the run it was for.
    expect(second.state.decisions).toEqual({});
    const done = await lead.resume(second.state, { 'call_1/call_2': true });
    expect(done.text).toBe('All done.');
    expect(log).toEqual(['One', 'Two']);
    expect(done.state).toMatchObject({ children: {}, decisions: {} });
  });

  it('continues a stored run whose resume had routed the decisions into the sub-agent\'s record, as states stored before did', async () => {
    const log: string[] = [];
    const { publish, researcherScript, leadScript } = publishing(log);
    const suspended = await team({ tools: [publish], researcher: researcherScript, lead: leadScript }).lead.run('Publish');
    // What a resume wrote into the store before decisions stayed with the lead; its worker then died.
    const routed = JSON.parse(JSON.stringify(suspended.state)) as RunState;
    Object.assign(routed, { status: 'running', segment: routed.segment + 1, pendingApprovals: [], decisions: {} });
    routed.children.call_1.decisions = { call_1: true };
    const clock = manualClock();
    const store = memoryStore({ leaseMs: 1000, clock });
    expect(await store.createRun({ state: routed, owner: 'a worker that died' })).toHaveProperty('lease');
    await clock.advance(1001);
    // A worker that recovers the run, with the same agents built again.
    const again = publishing(log);
    const researcher = createAgent({ name: 'researcher', instructions: 'You research.', model: mockModel(again.researcherScript.slice(1)), tools: [again.publish] });
    const lead = createAgent({ name: 'lead', model: mockModel(again.leadScript.slice(1)), tools: [researcher.asTool({ description: 'Researches a topic' })], store });
    const [recovered] = await lead.runs.recover();
    expect(recovered.result).toMatchObject({ status: 'completed', text: 'All done.' });
    expect(log).toEqual(['Otters']);
    expect(recovered.result!.state.children).toEqual({});
  });

  it('refuses a decision keyed by the sub-agent\'s own call id, listing the prefixed one', async () => {
    const { publish, researcherScript, leadScript } = publishing([]);
    const { lead } = team({ tools: [publish], researcher: researcherScript, lead: leadScript });
    const suspended = await lead.run('Publish');
    await expect(lead.resume(suspended.state, { call_1: true })).rejects.toThrow('agent.resume(): there is no pending approval with toolCallId "call_1" (pending: call_1/call_1)');
  });
});

describe('agent.asTool()', () => {
  it('is a tool named after the agent (or as given) taking { task }', () => {
    const agent = createAgent({ name: 'writer', model: mockModel([]) });
    const tool = agent.asTool({ description: 'Writes' });
    expect(tool.name).toBe('writer');
    expect(tool.spec).toMatchObject({ name: 'writer', description: 'Writes', parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] } });
    expect(agent.asTool({ name: 'ghostwriter', description: 'Writes' }).name).toBe('ghostwriter');
  });

  it('needs a description, telling the lead model what the agent does', () => {
    const agent = createAgent({ name: 'writer', model: mockModel([]) });
    expect(() => agent.asTool({} as never)).toThrow(new TypeError('agent.asTool(options): give { description } telling the lead model what writer does'));
  });
});

describe('a retried sub-agent call', () => {
  it('continues the same child run: its completed calls do not run again, and the idempotency key stays the same', async () => {
    const searched: string[] = [];
    const keys: string[] = [];
    const search = defineTool({ name: 'search', description: 'Searches', input: z.object({ query: z.string() }), execute: ({ query }, ctx) => { searched.push(query); keys.push(ctx.idempotencyKey); return `results for ${query}`; } });
    // The sub-agent searches, then its model fails once; the lead's layer retries the call.
    const researcher = mockModel([{ toolCalls: [{ name: 'search', args: { query: 'otters' } }] }, { error: 'overloaded' }, 'Otters hold hands.']);
    const runIds = new Set<string>();
    const agent = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ name: 'researcher', args: { task: 'Find otter facts' } }] }, 'Done.']), tools: [createAgent({ name: 'researcher', model: researcher, tools: [search] }).asTool({ description: 'Researches' })] })
      .use({ name: 'retry-once', async tool(_ctx, next) { const first = await next(); return first.error?.kind === 'execution' ? next() : first; } });
    const result = await agent.run('Otters?', { onEvent: (e) => { if (e.agentPath !== undefined) runIds.add(e.runId); } });
    expect(result.text).toBe('Done.');
    expect(searched).toEqual(['otters']);
    expect(runIds.size).toBe(1);
    expect(result.messages.find((m) => m.role === 'tool')).toMatchObject({ content: 'Otters hold hands.' });
    expect(result.state.children).toEqual({});
    expect(keys).toHaveLength(1);
  });
});
