// A replay's world: each provider call answered from the stored run's record instead of the
// model, each tool execution from it instead of the tool, for as long as the replayed run asks
// what the stored one asked. The first difference stops the run (or, when asked, the run goes on
// live from there), named by where it is and how.
import type { Layer } from '../../core/vocabulary/layer.js';
import type { ToolContext } from '../../core/vocabulary/contexts.js';
import { KoagentError, markOwnError } from '../../core/vocabulary/errors.js';
import type { Message } from '../../core/vocabulary/messages.js';
import type { GenerateResult } from '../../core/vocabulary/model.js';
import type { ToolOutcome } from '../../core/vocabulary/outcome.js';
import { ProviderError, type ProviderErrorKind } from '../../core/vocabulary/provider-error.js';
import type { RunState } from '../../core/vocabulary/state.js';
import { ToolError } from '../../core/vocabulary/tool-error.js';
import type { ProviderCall } from '../../core/run/agent-core.js';
import type { ToolCallContext } from '../../core/run/tool-context.js';
import { executeStep, executeStepWith } from '../../core/run/tool-steps.js';
import { bounded, jsonChanges, type JsonChange } from '../layer-trace/record.js';
import { jsonValue, transcriptAt, transcriptSource, type RecordedError, type RecordedModelCall, type RecordedToolCall, type ReplayRecord } from './record.js';
import { RequestDigests, requestFields } from './recorder.js';

declare module '../../core/vocabulary/errors.js' {
  interface ErrorCodes {
    /** A replay asked something the stored run did not (`koagent/replay`): it stopped there. */
    replay_diverged: true;
  }
}

/**
 * Where a replay first asked something the stored run did not, and how it differs: a model call
 * whose request differs (`changes`: from the stored request to the replayed one) or that the
 * stored run never made; a tool call with another tool or other arguments, or that the stored
 * run never ran; an approval the stored run was never asked; or, at the end, a call of the
 * stored run the replay did not make.
 *
 * @example if (report.divergence) console.log(`${report.divergence.kind} ${report.divergence.id}: ${report.divergence.reason}`);
 *
 * @inline
 */
export interface Divergence {
  kind: 'model' | 'tool' | 'approval' | 'missing';
  /** The model call's key (`turn:<step>:<n>`) or the tool call's id. */
  id: string;
  /** The tool's name, or the model call's purpose. */
  name: string;
  step: number;
  reason: string;
  changes?: JsonChange[];
}

const PLAYBACK: unique symbol = Symbol('koagent.playback');

declare module '../../core/vocabulary/contexts.js' {
  interface RunVariables {
    /** @internal koagent's own slot. */
    [PLAYBACK]?: Playback;
  }
}

/** A segment's variables that make it a replay on `playback`. */
export function playbackVars(playback: Playback): { [PLAYBACK]: Playback } {
  return { [PLAYBACK]: playback };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * One replay of a stored run: the record it answers from, what it has answered, and where the
 * replay first differed. Shared by the replay's segments (a replay resumed with the stored run's
 * decisions is one replay).
 */
export class Playback {
  readonly #models = new Map<string, RecordedModelCall>();
  readonly #tools = new Map<string, RecordedToolCall[]>();
  readonly #attempts = new Map<string, number>();
  readonly #digests = new RequestDigests();
  /** Each turn's request mark, by its model call's key. */
  readonly #requestMarks = new Map<string, number>();
  /** The messages found the same so far, by place: the replay's and the stored one compared. */
  readonly #checked: { mine: Message; theirs: Message }[] = [];
  /** The first difference, once there is one. */
  divergence: Divergence | undefined;
  /** After a difference, with `live`: the model and the tools are asked for real from then on. */
  isLive = false;
  readonly answered = { models: 0, tools: 0 };
  readonly liveCalls = { models: 0, tools: 0 };

  constructor(readonly stored: RunState, readonly record: ReplayRecord, readonly goesLive: boolean) {
    for (const call of record.models) this.#models.set(call.key, call);
    record.marks.forEach((mark, i) => {
      if (mark.kind === 'request' && mark.key !== undefined) this.#requestMarks.set(mark.key, i);
    });
    for (const call of record.tools) {
      const list = this.#tools.get(call.id);
      if (list === undefined) this.#tools.set(call.id, [call]);
      else list.push(call);
    }
  }

  /** A difference: the first is kept; with `live` the replay goes on live, else the error that stops it. */
  diverged(divergence: Divergence): KoagentError | undefined {
    this.divergence ??= divergence;
    if (this.goesLive) {
      this.isLive = true;
      return undefined;
    }
    return markOwnError(new KoagentError('replay_diverged', `replay diverged at ${divergence.kind} ${divergence.name} (${divergence.id}, step ${divergence.step}): ${divergence.reason}`));
  }

  /** The recorded answer to a provider call, or the difference that stops it. */
  model(call: ProviderCall): RecordedModelCall | Divergence {
    const kind = call.turn === undefined ? `side:${call.purpose}` : `turn:${call.turn.step}`;
    const n = (this.#attempts.get(kind) ?? 0) + 1;
    this.#attempts.set(kind, n);
    const key = `${kind}:${n}`;
    const step = call.turn?.step ?? this.stored.steps;
    const recorded = this.#models.get(key);
    if (recorded === undefined) return { kind: 'model', id: key, name: call.purpose, step, reason: `the stored run made no ${call.turn === undefined ? `${call.purpose} call` : `model call at step ${step}`}${n > 1 ? ` (attempt ${n})` : ''}: the replay asks the model where the stored run did not` };
    this.#models.delete(key);
    if (this.#digests.of(call.request, call.turn !== undefined) === recorded.digest && (call.turn === undefined || this.#sameMessages(recorded, call.request.messages))) {
      this.answered.models++;
      return recorded;
    }
    return { kind: 'model', id: key, name: call.purpose, step, reason: 'the request the provider gets differs from the stored one (a layer changed it)', changes: this.#requestChanges(recorded, call) };
  }

  /** The recorded execution of a tool call, or the difference that stops it. */
  tool(ctx: ToolContext): RecordedToolCall | Divergence {
    const { call } = ctx as ToolCallContext;
    const at = { kind: 'tool' as const, id: call.id, name: call.name, step: ctx.step };
    const recorded = this.#tools.get(call.id)?.shift();
    if (recorded === undefined) return { ...at, reason: `the stored run did not run ${call.name} for this call: the replay runs a tool where the stored run did not (it was denied, settled by a layer, or never asked for)` };
    const args = jsonValue(call.current) ?? {};
    if (recorded.name !== call.name || !same(recorded.args, args)) {
      const changes = jsonChanges(bounded({ toolName: recorded.name, args: recorded.args }), bounded({ toolName: call.name, args }));
      return { ...at, reason: `the call runs ${recorded.name === call.name ? 'with other arguments' : `${call.name} where the stored run ran ${recorded.name}`}`, changes };
    }
    if (recorded.suspended === true) return { ...at, reason: `the stored call ran a nested run (a sub-agent's) that waited for a human, which a replay cannot give back` };
    this.answered.tools++;
    return recorded;
  }

  /** The replay is over: the first call of the stored run it did not make, if nothing differed before. */
  leftOver(): Divergence | undefined {
    const model = this.#models.values().next();
    const tool = [...this.#tools.values()].find((list) => list.length > 0)?.[0];
    if (!model.done) return { kind: 'missing', id: model.value.key, name: model.value.purpose, step: model.value.step, reason: `the stored run made this model call; the replay did not` };
    if (tool !== undefined) return { kind: 'missing', id: tool.id, name: tool.name, step: tool.step, reason: `the stored run ran ${tool.name} for this call; the replay did not` };
    return undefined;
  }

  /**
   * Whether a turn's messages are those the stored turn's request had (the stored transcript's
   * first ones, as its mark tells). Each message is compared as JSON once: one the replay still
   * holds at the same place (the same object, against the same stored message) is not again.
   */
  #sameMessages(recorded: RecordedModelCall, messages: readonly Message[]): boolean {
    const index = this.#requestMarks.get(recorded.key);
    const source = index === undefined ? undefined : transcriptSource(this.record, this.stored.messages, index);
    if (source === undefined || messages.length !== recorded.messages) return false;
    for (let i = 0; i < messages.length; i++) {
      const checked = this.#checked[i];
      if (checked !== undefined && checked.mine === messages[i] && checked.theirs === source[i]) continue;
      if (JSON.stringify(messages[i]) !== JSON.stringify(source[i])) return false;
      this.#checked[i] = { mine: messages[i], theirs: source[i] };
    }
    return true;
  }

  /** The messages of the stored turn's request, where they can be told. */
  #storedMessages(recorded: RecordedModelCall): Message[] | undefined {
    const index = this.#requestMarks.get(recorded.key);
    return index === undefined ? undefined : transcriptAt(this.record, this.stored.messages, index);
  }

  /** From the stored request to the replayed one: its fields, its tools, and its messages where the stored ones can be told. */
  #requestChanges(recorded: RecordedModelCall, call: ProviderCall): JsonChange[] {
    const before: Record<string, unknown> = { ...recorded.fields, tools: recorded.tools };
    const after: Record<string, unknown> = { ...requestFields(call.request), tools: (call.request.tools ?? []).map((t) => t.name) };
    const messages = this.#storedMessages(recorded);
    if (messages !== undefined) {
      before.messages = messages;
      after.messages = jsonValue(call.request.messages) as Message[];
    } else {
      before.messageCount = recorded.messages;
      after.messageCount = call.request.messages.length;
    }
    const changes = jsonChanges(bounded(before), bounded(after));
    return changes.length > 0 ? changes : [{ path: '/messages', before: '(the stored request)', after: '(a request that differs in a message beyond what the record can show)' }];
  }
}

/** An error like the one the record kept: a `ProviderError` or a `ToolError` again, else an `Error` with its name, message, code and status. */
export function errorLike(recorded: RecordedError, provider?: string): Error {
  if (recorded.name === 'ProviderError' && recorded.kind !== undefined) {
    return new ProviderError({ provider: provider ?? 'unknown', kind: recorded.kind as ProviderErrorKind, status: recorded.status, providerMessage: recorded.providerMessage ?? recorded.message, retryable: recorded.retryable === true });
  }
  if (recorded.toolError === true) return new ToolError(recorded.message);
  const error = new Error(recorded.message) as Error & { code?: string; status?: number; retryable?: boolean };
  if (recorded.name !== undefined) error.name = recorded.name;
  if (recorded.code !== undefined) error.code = recorded.code;
  if (recorded.status !== undefined) error.status = recorded.status;
  if (recorded.retryable !== undefined) error.retryable = recorded.retryable;
  return error;
}

/** Outermost in a replay's provider stack: the recorded reply (or failure) instead of the provider's. */
export const playbackProviderLayer: Layer<ProviderCall, GenerateResult> = {
  name: 'koagent:playback',
  fn(call, next) {
    const playback = call.runVar[PLAYBACK];
    if (playback === undefined || playback.isLive) return countedLive(playback, 'models', next);
    const found = playback.model(call);
    if (!('digest' in found)) {
      const stop = playback.diverged(found);
      return stop === undefined ? countedLive(playback, 'models', next) : Promise.reject(stop);
    }
    if (found.error !== undefined) return Promise.reject(errorLike(found.error, found.provider));
    return Promise.resolve(structuredClone(found.reply!));
  },
};

function countedLive<T>(playback: Playback | undefined, what: 'models' | 'tools', go: () => Promise<T>): Promise<T> {
  if (playback !== undefined) playback.liveCalls[what]++;
  return go();
}

/** The execute step of a replay: each tool's recorded result (or throw) instead of running it, through the same ledger and checks. */
export function playbackExecute(ctx: ToolContext): Promise<ToolOutcome> {
  const playback = ctx.runVar[PLAYBACK];
  if (playback === undefined || playback.isLive) return countedLive(playback, 'tools', () => executeStep(ctx));
  const found = playback.tool(ctx);
  if (!('args' in found)) {
    const stop = playback.diverged(found);
    return stop === undefined ? countedLive(playback, 'tools', () => executeStep(ctx)) : Promise.reject(stop);
  }
  return executeStepWith(() => {
    if (found.error !== undefined) throw errorLike(found.error);
    return structuredClone(found.result);
  })(ctx);
}
