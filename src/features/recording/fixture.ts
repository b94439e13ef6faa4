// A stored run as a test fixture: its input, the model's replies as a `mockModel` script and as
// responses of the loopback OpenAI-compatible server, its tools' results by call id, the human
// decisions it was given, and what it ended with (transcript, trace). Plain JSON, so it is kept
// in a file beside the test.
import type { Tool, ToolContext } from '../../core/vocabulary/contexts.js';
import type { AssistantContentPart, ProviderOptions } from '../../core/vocabulary/content.js';
import { setOwn } from '../../core/vocabulary/json.js';
import type { Message } from '../../core/vocabulary/messages.js';
import type { ApprovalDecision, DecisionRecord, PendingApproval, RunState, StopReason } from '../../core/vocabulary/state.js';
import { traceOf, type LayerTraceRecord } from '../layer-trace/record.js';
import { errorLike } from './playback.js';
import { replayRecordOf, transcriptAt, type RecordedError, type RecordedModelCall, type ReplayRecord } from './record.js';

/**
 * One reply of a fixture's script, in `mockModel`'s script format (`MockReply` of
 * `koagent/testing`): text or content parts, the tool calls with their ids, the usage; or an error.
 *
 * @example const model = mockModel(fixture.replies);
 *
 * @inline
 */
export type FixtureReply =
  | { text: string; toolCalls?: FixtureToolCall[]; usage: { inputTokens: number; outputTokens: number; cachedInputTokens?: number; cacheWriteInputTokens?: number } }
  | { content: AssistantContentPart[]; toolCalls?: FixtureToolCall[]; usage: { inputTokens: number; outputTokens: number; cachedInputTokens?: number; cacheWriteInputTokens?: number } }
  | { error: string };

/**
 * A tool call of a fixture's reply, as `mockModel` takes it.
 *
 * @example const ids = fixture.replies.flatMap((r) => ('toolCalls' in r ? r.toolCalls ?? [] : [])).map((c) => c.id);
 *
 * @inline
 */
export interface FixtureToolCall {
  id: string;
  name: string;
  args: unknown;
  providerOptions?: ProviderOptions;
}

/**
 * One response of the loopback OpenAI-compatible server (`ScriptedResponse` of `koagent/testing`).
 *
 * @example const server = await openaiCompatibleServer({ responses: fixture.responses });
 *
 * @inline
 */
export type FixtureResponse =
  | { reply: { text: string; reasoning?: string; toolCalls?: { id: string; name: string; arguments: string }[]; usage: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number } } }
  | { status: number; body: { error: { message: string } } };

/**
 * What one tool call gave in the stored run: its arguments and its result, or what it threw.
 *
 * @example const failed = fixture.tools.filter((call) => call.error !== undefined);
 *
 * @inline
 */
export interface FixtureToolResult {
  id: string;
  name: string;
  args: unknown;
  result?: unknown;
  error?: RecordedError;
}

/**
 * A stored run as a regression test plays it: `koagent runs export <runId> --fixture`, or
 * `fixtureOf(state)`. Give the agent `mockModel(fixture.replies)` (or the loopback server with
 * `fixture.responses`) and `fixtureTools(fixture, tools)`, the same instructions
 * (`fixture.instructions`), and `playFixture(agent, fixture)` runs it offline to its end.
 *
 * @example const fixture: RunFixture = JSON.parse(readFileSync('test/fixtures/refund.json', 'utf8'));
 */
export interface RunFixture {
  version: 1;
  runId: string;
  agentName: string;
  /** The agent's instructions: the system message the run's transcript began with, if it did. */
  instructions?: string;
  /** What the run was started with: its transcript before its first model call, the instructions left out. */
  input: Message[];
  /** Every reply of the model, in order, as a `mockModel` script. */
  replies: FixtureReply[];
  /** The same replies as responses of `openaiCompatibleServer` (text and tool calls; reasoning as text). */
  responses: FixtureResponse[];
  /** Every tool execution, in order. */
  tools: FixtureToolResult[];
  /** The human decisions the run was given, in order (its decision log). */
  decisions: DecisionRecord[];
  /** How the run ended: its status, stop reason, transcript and layer trace. */
  status: RunState['status'];
  stopReason?: StopReason;
  messages: Message[];
  trace?: LayerTraceRecord;
}

function withoutKey<T extends object>(value: T, key: string): T {
  const { [key]: _dropped, ...rest } = value as Record<string, unknown>;
  return rest as T;
}

function scriptEntry(call: RecordedModelCall): FixtureReply {
  if (call.reply === undefined) return { error: call.error?.message ?? 'the recorded call failed' };
  const { message, usage } = call.reply;
  const toolCalls = message.toolCalls?.map((c): FixtureToolCall => ({ id: c.id, name: c.name, args: c.args, ...(c.providerOptions === undefined ? {} : { providerOptions: c.providerOptions }) }));
  const kept = { ...(toolCalls === undefined || toolCalls.length === 0 ? {} : { toolCalls }), usage: withoutKey({ ...usage }, 'totalTokens') };
  return typeof message.content === 'string' ? { text: message.content, ...kept } : { content: message.content, ...kept };
}

function serverResponse(call: RecordedModelCall): FixtureResponse {
  if (call.reply === undefined) return { status: call.error?.status ?? 500, body: { error: { message: call.error?.providerMessage ?? call.error?.message ?? 'failed' } } };
  const { message, usage } = call.reply;
  const parts = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  const text = parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('');
  const reasoning = parts.filter((p) => p.type === 'reasoning').map((p) => (p as { text: string }).text).join('');
  const reply: Extract<FixtureResponse, { reply: unknown }>['reply'] = { text, usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, ...(usage.cachedInputTokens === undefined ? {} : { cached_tokens: usage.cachedInputTokens }) } };
  if (reasoning !== '') reply.reasoning = reasoning;
  if (message.toolCalls !== undefined && message.toolCalls.length > 0) reply.toolCalls = message.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args) }));
  return { reply };
}

/**
 * The record of a stored run that replay and fixtures need, or a `TypeError` (naming `where`)
 * saying why there is none: the run was not recorded with its layer trace, its values were
 * withheld, or the record does not start with the run.
 */
export function playableRecord(state: RunState, where: string): { record: ReplayRecord; input: Message[] } {
  const record = replayRecordOf(state);
  if (record === undefined) throw new TypeError(`${where}: run ${state.runId} was not recorded: record it with its layer trace (createAgent({ layerTrace: true }), or { layerTrace: true } in the run's options)`);
  if (record.withheld === true) throw new TypeError(`${where}: run ${state.runId} kept no replies or results: a layer of its agent keeps values out of traces (traceValues: false, as piiRedactionMiddleware does)`);
  const start = record.marks[0];
  if (start?.kind !== 'start' || start.step !== 0) throw new TypeError(`${where}: run ${state.runId} was recorded from step ${start?.step ?? '?'} on only (its first segments ran without the layer trace): it cannot be played from its start`);
  const input = transcriptAt(record, state.messages, 0);
  if (input === undefined) throw new TypeError(`${where}: the transcript run ${state.runId} started with is no longer known (it was rewritten in a segment that did not finish)`);
  return { record, input };
}

/**
 * A stored run (its state, recorded with the layer trace) as a test fixture.
 *
 * @example writeFileSync('test/fixtures/refund.json', JSON.stringify(fixtureOf(await store.loadRun(runId)), null, 2));
 */
export function fixtureOf(state: RunState): RunFixture {
  const { record, input } = playableRecord(state, 'fixtureOf(state)');
  const first = input[0];
  const instructions = first?.role === 'system' ? first.content : undefined;
  const fixture: RunFixture = {
    version: 1, runId: state.runId, agentName: state.agentName,
    input: instructions === undefined ? input : input.slice(1),
    replies: record.models.map(scriptEntry),
    responses: record.models.map(serverResponse),
    tools: record.tools.map((call) => ({ id: call.id, name: call.name, args: call.args, ...(call.error === undefined ? { result: call.result } : { error: call.error }) })),
    decisions: structuredClone(state.decisionLog ?? []),
    status: state.status,
    messages: structuredClone(state.messages),
  };
  if (instructions !== undefined) fixture.instructions = instructions;
  if (state.stopReason !== undefined) fixture.stopReason = state.stopReason;
  const trace = traceOf(state);
  if (trace !== undefined) fixture.trace = structuredClone(trace);
  return fixture;
}

/**
 * `tools` (the agent's own) that give the fixture's results instead of running: each call by its
 * id gets what it returned in the stored run (or throws what it threw), in order; a call the
 * fixture does not have throws, naming it.
 *
 * @example const agent = createAgent({ model: mockModel(fixture.replies), tools: fixtureTools(fixture, [search, refund]) });
 */
export function fixtureTools<T extends Tool>(fixture: Pick<RunFixture, 'runId' | 'tools'>, tools: readonly T[]): T[] {
  const byId = new Map<string, FixtureToolResult[]>();
  for (const call of fixture.tools) byId.set(call.id, [...(byId.get(call.id) ?? []), call]);
  return tools.map((tool) => ({
    ...tool,
    execute(_args: unknown, ctx: ToolContext) {
      const call = byId.get(ctx.toolCallId)?.shift();
      if (call === undefined || call.name !== tool.name) throw new Error(`fixtureTools: run ${fixture.runId} did not run ${tool.name} for call ${ctx.toolCallId} (the fixture has no such result)`);
      if (call.error !== undefined) throw errorLike(call.error);
      return structuredClone(call.result);
    },
  }));
}

/**
 * The decisions a run's log gave the approvals `pending` asks for (each entry used once), or
 * the first approval it has none for.
 *
 * @example const { decisions, missing } = decisionsFromLog(fixture.decisions, result.pendingApprovals, new Set());
 */
export function decisionsFromLog(log: readonly DecisionRecord[], pending: readonly PendingApproval[], used: Set<DecisionRecord>): { decisions: Record<string, ApprovalDecision>; missing?: PendingApproval } {
  const decisions: Record<string, ApprovalDecision> = {};
  for (const approval of pending) {
    const entry = log.find((d) => d.toolCallId === approval.toolCallId && !used.has(d));
    if (entry === undefined) return { decisions, missing: approval };
    used.add(entry);
    const decision: Exclude<ApprovalDecision, boolean> = { approved: entry.decision === 'approved', surface: entry.surface };
    if (entry.reason !== undefined) decision.reason = entry.reason;
    if (entry.editedArgs !== undefined) decision.args = entry.editedArgs;
    if (entry.actor !== undefined) decision.actor = entry.actor;
    setOwn(decisions, approval.toolCallId, decision);
  }
  return { decisions };
}
