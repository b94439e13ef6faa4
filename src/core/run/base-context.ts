import type { BaseContext, CallVariables, Logger, RunVariables, SubagentInfo } from '../vocabulary/contexts.js';
import type { EmittedEvent } from '../vocabulary/events.js';
import { plainJson } from '../vocabulary/json.js';
import type { Message } from '../vocabulary/messages.js';
import type { Segment } from './segment.js';
import type { RunState } from '../vocabulary/state.js';

/**
 * What every context of a segment shares. The segment it belongs to is a private field:
 * koagent's own code reaches it with `segmentOf(ctx)`, and no property of a context shows it.
 * Fields read on every call are the context's own; the others read through to the segment.
 *
 * @example class MyContext extends CallContext { constructor(segment: Segment) { super(segment); } }
 */
export abstract class CallContext implements BaseContext {
  readonly #segment: Segment;
  #var: CallVariables | undefined;
  readonly messages: Message[];
  signal: AbortSignal;
  readonly state: RunState;
  // Present only when they apply: hooks test for them with `in` or `?.`.
  declare readonly subagent?: SubagentInfo;
  declare readonly emit?: <T extends string>(event: EmittedEvent<T>) => void;

  constructor(segment: Segment) {
    const { base } = segment;
    this.#segment = segment;
    this.messages = segment.views.transcript;
    this.signal = base.signal;
    this.state = segment.views.state;
    if (base.subagent !== undefined) this.subagent = base.subagent;
    if (base.emit !== undefined) this.emit = base.emit;
  }

  /** The segment behind a context koagent created (see `segmentOf`). */
  static segmentOf(ctx: BaseContext): Segment {
    return (ctx as CallContext).#segment;
  }

  get context(): unknown {
    return this.#segment.base.context;
  }

  get agentId(): string {
    return this.#segment.base.agentId;
  }

  get agentName(): string {
    return this.#segment.base.agentName;
  }

  get runId(): string {
    return this.#segment.base.runId;
  }

  get sessionId(): string {
    return this.#segment.base.sessionId;
  }

  get metadata(): Record<string, unknown> {
    return this.#segment.base.metadata;
  }

  get logger(): Logger {
    return this.#segment.agent.logger;
  }

  get runVar(): RunVariables {
    return this.#segment.runVar;
  }

  get var(): CallVariables {
    return (this.#var ??= Object.create(null) as CallVariables);
  }

  setHookState(name: string, value: unknown): void {
    if (typeof name !== 'string' || name === '') throw new TypeError('ctx.setHookState(name, value): name must be a non-empty string (it keys the value in state.hookState)');
    this.#segment.writer.setHookState(name, plainJson(value, `hook state ${JSON.stringify(name)}`, 'state'));
  }

  countUsage(name: string, amount: number): void {
    if (typeof name !== 'string' || name === '' || OWN_COUNTS.has(name)) {
      throw new TypeError(`ctx.countUsage(name, amount): name must be a counter of your own, not ${JSON.stringify(name)} (koagent counts ${[...OWN_COUNTS].join(', ')} itself)`);
    }
    if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new TypeError(`ctx.countUsage(${JSON.stringify(name)}, amount): amount must be a finite number, not ${String(amount)}`);
    this.#segment.writer.countUsage(name, amount);
  }
}

/** The counts koagent keeps itself: a layer adding to them would make limits lie. */
const OWN_COUNTS: ReadonlySet<string> = new Set(['inputTokens', 'outputTokens', 'totalTokens', 'modelCalls', 'toolCalls', 'cachedInputTokens', 'cacheWriteInputTokens']);

/** The segment behind a context koagent created. */
export function segmentOf(ctx: BaseContext): Segment {
  return CallContext.segmentOf(ctx);
}
