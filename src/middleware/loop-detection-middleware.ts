// Loop detection: a model that calls the same tool with the same arguments again and again, or
// swings between two (or a few) calls, is stuck. Within a window of recent calls, spot it, do
// not run the call, and tell the model — or end the run with stop reason `stop:loop`.
import { createHash } from 'node:crypto';
import { hookState, optionsSchema, parseOptions, toolError, wholeNumberSchema, type GenerateResult, type Middleware, type ModelContext, type ToolContext, type ToolOutcome } from '../api.js';
import { z } from 'zod';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'loop_detection.detected': { toolCallId: string; toolName: string; action: 'warn' | 'end' }
      & ({ loop: 'repeat'; tool: string; times: number; window: number } | { loop: 'oscillation'; tools: string[]; period: number; cycles: number });
  }
}

/**
 * Options of `loopDetectionMiddleware`. Two calls are the same when they call the same tool
 * with the same arguments, key order aside (`{ a: 1, b: 2 }` is `{ b: 2, a: 1 }`).
 *
 * @example loopDetectionMiddleware({ window: 12, repeats: 3, oscillation: { maxPeriod: 3 }, onLoop: 'warn', maxWarnings: 2 })
 *
 * @inline
 */
export interface LoopDetectionOptions {
  /** How many of the most recent tool calls are looked at (default 10). */
  window?: number;
  /** The same call this many times within the window is a loop (default 3; at least 2). */
  repeats?: number;
  /**
   * A sequence of `p` different calls made `cycles` times in a row (A-B-A-B: period 2, two
   * cycles) is a loop, for `p` from 2 to `maxPeriod` (defaults: `maxPeriod` 2, `cycles` 2).
   * `false` looks for repeats only.
   */
  oscillation?: false | { maxPeriod?: number; cycles?: number };
  /**
   * What a loop does: `'warn'` (default) settles the call with a tool error explaining the
   * loop, without running it, so the model can change course; `'end'` settles it so, then ends
   * the run before the next model call with stop reason `stop:loop` and the loop as its output.
   */
  onLoop?: 'warn' | 'end';
  /** With `'warn'`: after this many warnings in a run, the next loop ends it (default: never). */
  maxWarnings?: number;
  /** Tools whose calls are never taken for a loop (a `wait` or a status poll), and are left out of the window. */
  excludeTools?: string[];
}

/** A loop found: what the run's output and the `loop_detection.detected` event say. */
type Loop =
  | { loop: 'repeat'; tool: string; times: number; window: number }
  | { loop: 'oscillation'; tools: string[]; period: number; cycles: number };

/**
 * One call in the window: `[id, tool, digest of tool and arguments]` — never the arguments
 * (they may hold what a redaction layer keeps out of the state); a tuple, as it is written
 * with every step.
 */
type Seen = [id: string, tool: string, call: string];

/** What this layer keeps in the run's hook state: the window only, so it stays small. */
interface LoopState {
  recent: Seen[];
  warnings: number;
  end?: { output: Loop & { message: string } };
}

const NAME = 'loop-detection';

const optionsShape = optionsSchema({
  window: wholeNumberSchema(2).optional(),
  repeats: wholeNumberSchema(2).optional(),
  oscillation: z.union([z.literal(false), optionsSchema({ maxPeriod: wholeNumberSchema(2).optional(), cycles: wholeNumberSchema(2).optional() }, { noun: 'an oscillation option', aliases: { period: 'maxPeriod', times: 'cycles', repeats: 'cycles' } })],
    { error: 'must be false or { maxPeriod?, cycles? }' }).optional(),
  onLoop: z.enum(['warn', 'end'], { error: "must be 'warn' or 'end'" }).optional(),
  maxWarnings: wholeNumberSchema(0).optional(),
  excludeTools: z.array(z.string(), { error: 'must be a list of tool names' }).optional(),
}, { noun: 'a loop-detection option', aliases: { windowSize: 'window', size: 'window', threshold: 'repeats', maxRepeats: 'repeats', times: 'repeats', onDetect: 'onLoop', action: 'onLoop', exclude: 'excludeTools', ignoreTools: 'excludeTools' } });

/**
 * A `tool` middleware (with a `model` part for ending) that spots a stuck model: within the
 * last `window` tool calls, the same call (tool and arguments, key order aside) `repeats`
 * times, or an oscillation (A-B-A-B, up to period `maxPeriod`). The call that closes the loop
 * does not run: the model gets a tool error naming the loop and asking for another approach,
 * or the run ends with stop reason `stop:loop`. The window is kept in hook state (digests of
 * the calls, not their arguments), so it survives suspend, resume and recovery; it sees calls
 * as the model wrote them (`rawCalls`), so a call repeated with the same invalid arguments is
 * a loop too. Emits `loop_detection.detected`.
 *
 * @example agent.use(loopDetectionMiddleware({ repeats: 3, window: 10, onLoop: 'end' }));
 */
export function loopDetectionMiddleware(options: LoopDetectionOptions = {}): Middleware & { name: 'loop-detection' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('loopDetectionMiddleware(options): options must be an object, e.g. { repeats: 3, window: 10 }');
  parseOptions(optionsShape, options, 'loopDetectionMiddleware');
  const { window = 10, repeats = 3, onLoop = 'warn', maxWarnings = Infinity } = options;
  const oscillation = options.oscillation === false ? undefined : { maxPeriod: options.oscillation?.maxPeriod ?? 2, cycles: options.oscillation?.cycles ?? 2 };
  if (repeats > window) throw new TypeError(`loopDetectionMiddleware: repeats (${repeats}) must be at most window (${window}): a loop must fit in the window`);
  if (oscillation !== undefined && oscillation.maxPeriod * oscillation.cycles > window) {
    throw new TypeError(`loopDetectionMiddleware: oscillation.maxPeriod × cycles (${oscillation.maxPeriod * oscillation.cycles}) must be at most window (${window}): a loop must fit in the window`);
  }
  const excluded = new Set(options.excludeTools ?? []);
  const states = hookState<LoopState>(NAME, () => ({ recent: [], warnings: 0 }));

  return {
    name: NAME,
    // Before validation: a model stuck on the same invalid call is looping too.
    rawCalls: true,
    tool: function detectLoops(ctx: ToolContext, next: () => Promise<ToolOutcome>): Promise<ToolOutcome> | ToolOutcome {
      if (excluded.has(ctx.toolName)) return next();
      const state = states.get(ctx);
      // A call a human approved, or one run again after an interruption, is in the window already.
      if (ctx.resumedAfterApproval || state.recent.some(([id]) => id === ctx.toolCallId)) return next();
      const recent: Seen[] = [...state.recent, [ctx.toolCallId, ctx.toolName, digest(ctx.toolName, ctx.args)] as Seen].slice(-window);
      const loop = repeated(recent, repeats, window) ?? (oscillation === undefined ? undefined : oscillating(recent, oscillation.maxPeriod, oscillation.cycles));
      if (loop === undefined) {
        states.set(ctx, { ...state, recent });
        return next();
      }
      const ends = onLoop === 'end' || state.warnings >= maxWarnings;
      const message = loopMessage(loop, ends);
      ctx.emit?.({ type: 'loop_detection.detected', toolCallId: ctx.toolCallId, toolName: ctx.toolName, ...loop, action: ends ? 'end' : 'warn' });
      // The call that was not run stays in the window: repeating it again is still the loop.
      states.set(ctx, { recent, warnings: state.warnings + (ends ? 0 : 1), ...(ends ? { end: state.end ?? { output: { ...loop, message } } } : state.end ? { end: state.end } : {}) });
      return toolError('tool_error', message, NAME);
    },
    // Between steps: the run ends where the model would be asked next.
    model: function endOnLoop(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> | GenerateResult {
      const end = (ctx.state.hookState[NAME] as LoopState | undefined)?.end;
      return end === undefined || ctx.purpose !== 'turn' ? next() : ctx.end(end.output, 'stop:loop');
    },
  };
}

/** The same call `repeats` times in the window (the newest call among them). */
function repeated(recent: Seen[], repeats: number, window: number): Loop | undefined {
  const [, tool, call] = recent[recent.length - 1];
  const times = recent.filter((seen) => seen[2] === call).length;
  return times >= repeats ? { loop: 'repeat', tool, times, window } : undefined;
}

/** The newest calls are `cycles` rounds of one sequence of `period` calls, not all the same. */
function oscillating(recent: Seen[], maxPeriod: number, cycles: number): Loop | undefined {
  for (let period = 2; period <= maxPeriod; period++) {
    const span = period * cycles;
    if (recent.length < span) break;
    const tail = recent.slice(-span);
    if (!tail.every((seen, i) => i < period || seen[2] === tail[i - period][2])) continue;
    const round = tail.slice(0, period);
    // A-A is a repeat, and A-B-A-A-B-A is period 3 with A twice: each call of a round must differ from the next.
    if (round.some((seen, i) => seen[2] === round[(i + 1) % period][2])) continue;
    return { loop: 'oscillation', tools: round.map((seen) => seen[1]), period, cycles };
  }
  return undefined;
}

/** What the model reads: the loop it is in, that the call did not run, and what to do instead. */
function loopMessage(loop: Loop, ends: boolean): string {
  const what = loop.loop === 'repeat'
    ? `this is call number ${loop.times} of ${loop.tool} with these same arguments within the last ${loop.window} tool calls`
    : `the last ${loop.period * loop.cycles} tool calls repeat the same ${loop.period} calls (${loop.tools.join(', ')}) ${loop.cycles} times over`;
  const instead = ends
    ? 'The run ends here.'
    : 'Its result would be the one you already have. Do something different: change the arguments, use another tool, or answer with what you know.';
  return `Loop detected: ${what}, so this call was not run. ${instead}`;
}

/** A short digest of a call: its tool and its arguments as canonical JSON (keys sorted at every depth). */
function digest(tool: string, args: unknown): string {
  return createHash('sha256').update(tool).update('\u0000').update(canonical(args)).digest('base64url').slice(0, 12);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
