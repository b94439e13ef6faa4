import type { BaseContext, Logger, SubagentInfo } from './contexts.js';
import type { EmittedEvent } from './events.js';
import { plainJson } from './json.js';
import type { Message } from './messages.js';
import type { Segment } from './segment.js';
import type { RunState } from './state.js';

/**
 * What every context of a segment shares. Contexts are classes, so their methods cost nothing
 * per call; the segment they belong to is private, reachable only from koagent's own code.
 */
export abstract class CallContext implements BaseContext {
  // Fields the hot path reads are own; the others read through to the segment (no copy per call).
  readonly messages: Message[];
  signal: AbortSignal;
  readonly state: RunState;
  declare readonly subagent?: SubagentInfo;
  declare readonly emit?: (event: EmittedEvent) => void;
  readonly #segment: Segment;

  constructor(segment: Segment) {
    const base = segment.base;
    this.#segment = segment;
    this.messages = segment.state.messages;
    this.signal = base.signal;
    this.state = segment.state;
    if (base.subagent !== undefined) (this as { subagent?: SubagentInfo }).subagent = base.subagent;
    if (base.emit !== undefined) (this as { emit?: unknown }).emit = base.emit;
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

  setHookState(name: string, value: unknown): void {
    if (typeof name !== 'string' || name === '') throw new TypeError('ctx.setHookState(name, value): name must be a non-empty string (it keys the value in state.hookState)');
    this.#segment.writer.setHookState(name, plainJson(value, `hook state ${JSON.stringify(name)}`, 'state'));
  }

  /** The segment a context belongs to (koagent's own code only: features and tool steps). */
  static segmentOf(ctx: CallContext): Segment {
    return ctx.#segment;
  }
}

/** The segment behind a context koagent created. */
export function segmentOf(ctx: BaseContext): Segment {
  return CallContext.segmentOf(ctx as CallContext);
}
