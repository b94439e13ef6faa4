// One tool call: its record (what the model wrote, the arguments as checked, what was decided of
// it, its execution), and the check of a model's arguments against the bounds, made once as the
// reply is kept.
import { startingArgs, type Decision } from '../state/approved-call.js';
import type { Tool, ToolCallRecord, ToolContext } from '../vocabulary/contexts.js';
import type { PermissionRecord } from '../vocabulary/events.js';
import { copyJson } from '../vocabulary/json.js';
import type { AssistantToolCall } from '../vocabulary/messages.js';
import type { ToolOutcome } from '../vocabulary/outcome.js';
import { exceptionOutcome } from '../vocabulary/tool-exception.js';
import type { ArgumentBounds } from './agent-core.js';
import type { Segment } from './segment.js';

/** What the execute step keeps of a call: its execution in flight or done, and whether that one failed. */
export interface Execution {
  outcome?: Promise<ToolOutcome>;
  failed: boolean;
}

/**
 * One tool call, from the reply that asked for it to its result in the transcript. Made where
 * the reply is kept (or, for a resumed turn, where the turn starts), with its arguments checked
 * against the bounds once; layers change it only through its methods (or `ctx.args` and
 * `ctx.toolName`, which call them), so whether it changed since validation checked it is a fact
 * it knows. It holds what the steps decide of it too: the tool and parsed arguments validation
 * found, the rules' decision, the human's, and the execution.
 *
 * @example const call = new ToolCall(segment, reply.toolCalls[0], checked); call.setArgs({ city: 'Paris' }); call.changed // true
 */
export class ToolCall implements ToolCallRecord {
  readonly id: string;
  readonly written: AssistantToolCall;
  readonly decision: Decision | undefined;
  #name: string;
  /** The current arguments, or why the model's are not arguments (the message the model reads). */
  #args: Record<string, unknown> | string;
  /** Whether `#args` is this call's own object, which layers may edit (else the state's, which they may not). */
  #owned = false;
  /** A layer set the arguments or the name since validation checked them. */
  #changed = false;
  /** A layer was handed the arguments (`ctx.args`) since then, and may have edited them in place. */
  #handedOut = false;
  /** What validation found: the tool, and the arguments as its schema parsed them. */
  tool: Tool | undefined = undefined;
  #parsed: unknown = undefined;
  #policy: PermissionRecord | undefined;
  /** The execute step's record of this call (see `Execution`). */
  execution: Execution | undefined;
  /** The context the call runs in now (a retried segment makes a new one). */
  context: ToolContext | undefined;

  /**
   * `checked`: the model's arguments as an object, or why they are not one, as the reply was
   * kept; undefined to check them now (a turn a resume continues).
   */
  constructor(private readonly segment: Segment, written: AssistantToolCall, checked?: Record<string, unknown> | string) {
    this.id = written.id;
    this.written = written;
    this.decision = segment.writer.decisionOn(written.id);
    this.#name = written.name;
    // A call a human approved starts from what they approved (what the layers had made of it).
    const given = this.decision === undefined ? written.args : startingArgs(this.decision, written.name, written.args);
    this.#args = given === written.args && checked !== undefined ? checked : argsObject(given, segment.agent.argumentBounds);
  }

  get name(): string {
    return this.#name;
  }

  /** Why the arguments are not arguments (past the bounds, not a JSON object), or undefined when they are. */
  get problem(): string | undefined {
    return typeof this.#args === 'string' ? this.#args : undefined;
  }

  /**
   * The arguments as layers see them: the call's own copy (plain JSON, never the transcript's).
   * A layer handed them may edit them in place, so until validation checks them again the call
   * counts as changed.
   */
  get args(): Record<string, unknown> {
    this.#handedOut = true;
    return this.#own();
  }

  /** The arguments as they are now, for koagent's own steps (no copy, no view: read, never written). */
  get current(): Record<string, unknown> {
    return typeof this.#args === 'string' ? {} : this.#args;
  }

  get parsedArgs(): unknown {
    return this.#parsed;
  }

  get changed(): boolean {
    return this.#changed || this.#handedOut;
  }

  get policy(): PermissionRecord | undefined {
    return this.#policy;
  }

  /** `${runId}:${id}`: the same for every attempt at this call. */
  get idempotencyKey(): string {
    return `${this.segment.state.runId}:${this.id}`;
  }

  setArgs(args: Record<string, unknown>): void {
    if (!isArgsObject(args)) throw new TypeError(`ctx.call.setArgs(args): the arguments of ${this.#name} must be an object, got ${args === null ? 'null' : Array.isArray(args) ? 'an array' : typeof args}`);
    // Plain JSON of its own: a view of these arguments, or an object a layer keeps, stays the layer's.
    this.#args = copyJson(args);
    this.#owned = true;
    this.#changed = true;
  }

  rename(name: string): void {
    if (typeof name !== 'string' || name === '') throw new TypeError(`ctx.call.rename(name): name must be a tool's name (a non-empty string), got ${JSON.stringify(name)}`);
    if (name !== this.#name) this.#changed = true;
    this.#name = name;
  }

  /** Validation judged the call as it is now: `tool` with `parsed` arguments. It is unchanged again. */
  checked(tool: Tool, parsed: unknown): void {
    this.tool = tool;
    this.#parsed = parsed;
    this.#changed = false;
    this.#handedOut = false;
  }

  decide(fields: Pick<PermissionRecord, 'decision' | 'source' | 'rule' | 'hook' | 'reason'>): void {
    this.#policy = { toolName: this.#name, toolCallId: this.id, args: copyJson(this.current), ...fields };
    this.segment.bus.permission(this.#policy, fields);
  }

  thrown(error: unknown, by: string): ToolOutcome {
    return exceptionOutcome(this.segment.agent.onToolException, this.context!, error, by);
  }

  /** The arguments as an object this call may give layers to edit: a copy of the state's, made once. */
  #own(): Record<string, unknown> {
    if (typeof this.#args === 'string') this.#args = {};
    if (!this.#owned) {
      this.#args = copyJson(this.#args);
      this.#owned = true;
    }
    return this.#args;
  }
}

export const DEFAULT_ARGUMENT_BOUNDS: ArgumentBounds = { maxDepth: 64, maxBytes: 1_048_576 };

/** What the transcript keeps in place of arguments past the bounds: a note, not the arguments. */
const REFUSED = 'koagent refused these arguments: ';

/**
 * A model's arguments as an object: parsed from JSON text if need be, or why they are not one
 * (the message the model reads back) — text that is no JSON object, or arguments past the
 * bounds, or the note that took their place in the transcript.
 *
 * @example argsObject('{"city":"Paris"}', DEFAULT_ARGUMENT_BOUNDS) // { city: 'Paris' }
 */
export function argsObject(raw: unknown, bounds: ArgumentBounds = DEFAULT_ARGUMENT_BOUNDS): Record<string, unknown> | string {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.startsWith(REFUSED)) return raw.slice(REFUSED.length);
    if (raw.trim() === '') return {};
    if (raw.length > bounds.maxBytes) return `the arguments are ${raw.length} bytes of JSON, more than the ${bounds.maxBytes} allowed`;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return `the arguments are not valid JSON (${(error as Error).message})`;
    }
  }
  if (!isArgsObject(value)) {
    return `the arguments must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
  }
  const problem = pastBounds(value, bounds);
  return problem ?? (value as Record<string, unknown>);
}

/** Whether `value` has the shape of a call's arguments: an object, not null or an array. */
export function isArgsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A model's arguments, checked once as its reply is kept: what the transcript keeps — the
 * arguments as written, or, past the bounds, a note saying why (so the run state stays small
 * and writable as JSON) — and the arguments as an object, or why they are none (the call then
 * settles as a `validation` error the model reads).
 *
 * @example checkedArgs('{"city":"Paris"}', DEFAULT_ARGUMENT_BOUNDS) // { kept: '{"city":"Paris"}', args: { city: 'Paris' } }
 */
export function checkedArgs(raw: unknown, bounds: ArgumentBounds): { kept: unknown; args: Record<string, unknown> | string } {
  const args = argsObject(raw, bounds);
  const past = typeof args === 'string' && (typeof raw === 'string' ? raw.length > bounds.maxBytes : typeof raw === 'object' && raw !== null && !Array.isArray(raw));
  return { kept: past ? `${REFUSED}${args}` : raw, args };
}

/**
 * Why `value` is nested deeper or is larger than the bounds allow (or holds a `__proto__`
 * key), stopping as soon as a bound is passed. It walks with a stack of its own, not by
 * recursion: arguments nested 10,000 levels deep must not overflow the call stack. Bytes are
 * counted as JSON takes them: an array by its elements, an object by its own keys.
 */
function pastBounds(value: object, { maxDepth, maxBytes }: ArgumentBounds): string | undefined {
  // Values still to count, each followed by its depth.
  const pending: unknown[] = [value, 1];
  let bytes = 0;
  while (pending.length > 0) {
    const depth = pending.pop() as number;
    const current = pending.pop();
    // A leaf: a string with its quotes, anything else 8 bytes.
    if (typeof current !== 'object' || current === null) bytes += typeof current === 'string' ? current.length + 2 : 8;
    else if (depth > maxDepth) return `the arguments are nested deeper than ${maxDepth} levels`;
    else if (Array.isArray(current)) {
      bytes += current.length;
      for (let i = current.length - 1; i >= 0; i--) pending.push(current[i], depth + 1);
    } else {
      for (const key in current) {
        if (!Object.hasOwn(current, key)) continue;
        // zod drops such a key from what the tool gets while a rule would still see it: refused,
        // so every reader sees one object graph (and none becomes a prototype).
        if (key === '__proto__') return 'the arguments contain a "__proto__" key, which is refused';
        bytes += key.length + 4;
        pending.push((current as Record<string, unknown>)[key], depth + 1);
      }
    }
    if (bytes > maxBytes) return `the arguments are larger than the ${maxBytes} bytes of JSON allowed`;
  }
  return undefined;
}
