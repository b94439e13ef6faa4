import type { BaseContext, Logger, SubagentInfo } from '../vocabulary/contexts.js';
import type { EmittedEvent } from '../vocabulary/events.js';
import { plainJson } from '../vocabulary/json.js';
import type { Message } from '../vocabulary/messages.js';
import type { Segment } from './segment.js';
import type { RunState } from '../vocabulary/state.js';

/**
 * The key of the method that gives a context's segment. The package does not export it:
 * koagent's own code calls `segmentOf(ctx)`, and no property of a context shows the segment.
 * (Unlike a private field, a method under a symbol can be found by reflecting on the class;
 * the contexts' public API is what layers are written against, and what the dependency rules
 * hold the dialects and built-in middleware to.)
 */
export const SEGMENT: unique symbol = Symbol('koagent.segment');

/**
 * What every context of a segment shares. Contexts are classes, so their methods cost nothing
 * per call; the segment they belong to is kept in a private field of each context class.
 *
 * This class holds no state of its own, and has no constructor: V8 (Node 20) does not inline
 * the constructor of a base class that has one, so each context made per call (a model turn,
 * a tool call) would pay a generic construction, about 300 instructions. Each subclass keeps
 * its segment in a private field of its own and sets the shared fields with `bindContext`.
 *
 * @example class MyContext extends CallContext { readonly #segment: Segment; constructor(segment: Segment) { super(); this.#segment = segment; bindContext(this, segment); } [SEGMENT]() { return this.#segment; } }
 */
export abstract class CallContext implements BaseContext {
  // Declared, not defined: a field defined here would give this class a constructor (see above).
  // Fields the hot path reads are own; the others read through to the segment (no copy per call).
  declare readonly messages: Message[];
  declare signal: AbortSignal;
  declare readonly state: RunState;
  declare readonly subagent?: SubagentInfo;
  declare readonly emit?: (event: EmittedEvent) => void;

  /** The segment this context belongs to. */
  abstract [SEGMENT](): Segment;

  get context(): unknown {
    return this[SEGMENT]().base.context;
  }

  get agentId(): string {
    return this[SEGMENT]().base.agentId;
  }

  get agentName(): string {
    return this[SEGMENT]().base.agentName;
  }

  get runId(): string {
    return this[SEGMENT]().base.runId;
  }

  get sessionId(): string {
    return this[SEGMENT]().base.sessionId;
  }

  get metadata(): Record<string, unknown> {
    return this[SEGMENT]().base.metadata;
  }

  get logger(): Logger {
    return this[SEGMENT]().agent.logger;
  }

  setHookState(name: string, value: unknown): void {
    if (typeof name !== 'string' || name === '') throw new TypeError('ctx.setHookState(name, value): name must be a non-empty string (it keys the value in state.hookState)');
    this[SEGMENT]().writer.setHookState(name, plainJson(value, `hook state ${JSON.stringify(name)}`, 'state'));
  }
}

/** The segment behind a context koagent created. */
export function segmentOf(ctx: BaseContext): Segment {
  return (ctx as CallContext)[SEGMENT]();
}

/**
 * Set the fields every context shares, from its segment: each subclass's constructor calls
 * this right after `super()`.
 */
export function bindContext(ctx: CallContext, segment: Segment): void {
  const base = segment.base;
  const fields = ctx as { -readonly [K in 'messages' | 'signal' | 'state' | 'subagent' | 'emit']: CallContext[K] };
  fields.messages = segment.views.transcript;
  fields.signal = base.signal;
  fields.state = segment.views.state;
  if (base.subagent !== undefined) fields.subagent = base.subagent;
  if (base.emit !== undefined) fields.emit = base.emit;
}
