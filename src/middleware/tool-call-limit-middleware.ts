// Tool-call limits: per tool and overall, per run (hook state) and per session (a key-value
// store). Past a limit the call does not run; the model reads why, or the run ends.
import { hookState, ownValue, setOwn, optionsSchema, parseOptions, toolError, wholeNumberSchema, type GenerateResult, type Middleware, type ModelContext, type ToolContext, type ToolOutcome } from '../api.js';
import { keyValuesOf, type KeyValueSource } from '../stores/key-values.js';
import { z } from 'zod';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'tool_call_limit.reached': { toolCallId: string; toolName: string; limit: 'tool_calls'; scope: 'run' | 'session'; tool?: string; max: number; onLimit: 'error' | 'end' };
  }
}

/**
 * How many tool calls one scope allows: `total` over all tools, `byTool` per tool name. A tool
 * not named in `byTool` is bounded by `total` only.
 *
 * @example const caps: ToolCallCaps = { total: 20, byTool: { search: 3, fetch_page: 10 } };
 *
 * @inline
 */
export interface ToolCallCaps {
  /** Calls of any tool. */
  total?: number;
  /** Calls of one tool, by its name. */
  byTool?: Record<string, number>;
}

/**
 * Options of `toolCallLimitMiddleware`: caps per run, per session or both, and what happens to
 * a call past one. A call counts when it was carried out: it returned a result (a layer's
 * replacement included) or the tool failed (`execution`, `tool_error`). A call that did not run
 * does not count: refused by a limit, denied (a rule, a hook, a human), blocked by a guardrail,
 * invalid, cancelled — or waiting for approval: it counts when it runs after the approval, and
 * is checked against the limits then, so an approval never takes a run past its limit.
 *
 * @example toolCallLimitMiddleware({ perRun: { byTool: { search: 3 } }, perSession: { total: 200, ttlMs: 86_400_000 }, onLimit: 'error' })
 *
 * @inline
 */
export interface ToolCallLimitOptions {
  /** Caps over one run (all its segments: suspend and resume do not reset them). */
  perRun?: ToolCallCaps;
  /** Caps over every run of a session (`sessionId`), counted in `store`; `ttlMs` starts a new count that long after the first call. */
  perSession?: ToolCallCaps & { ttlMs?: number };
  /**
   * Past a limit: `'error'` (default) settles the call with a tool error the model reads,
   * naming the limit and what to do instead; `'end'` settles it so too, then ends the run
   * before the next model call with stop reason `limit:tool_calls:<tool>` (a per-tool cap) or
   * `limit:tool_calls` (a total).
   */
  onLimit?: 'error' | 'end';
  /** Where session counts are kept: a key-value store or a run store (default: this process's memory). */
  store?: KeyValueSource;
}

/** A limit a call ran into, as the run's output and the `tool_call_limit.reached` event give it. */
interface LimitHit {
  limit: 'tool_calls';
  scope: 'run' | 'session';
  /** Set for a per-tool cap. */
  tool?: string;
  max: number;
}

/** What this layer keeps in the run's hook state. */
interface LimitState {
  /** Calls counted in this run: all, and per tool. */
  total: number;
  byTool: Record<string, number>;
  /** Calls counted on entry and not settled yet (by call id): a call entering again is not counted twice. */
  open: Record<string, string>;
  /** Set in `'end'` mode once a call ran into a limit: the next model call ends the run so. */
  end?: { output: LimitHit & { message: string }; reason: `limit:${string}` };
}

const NAME = 'tool-call-limit';

const capsShape = {
  total: wholeNumberSchema(0).optional(),
  byTool: z.record(z.string(), wholeNumberSchema(0), { error: 'must be an object of tool names to whole numbers ≥ 0' }).optional(),
};

const optionsShape = optionsSchema({
  perRun: optionsSchema(capsShape, { noun: 'a per-run cap', aliases: { max: 'total', tools: 'byTool', perTool: 'byTool' } }).optional(),
  perSession: optionsSchema({ ...capsShape, ttlMs: z.number({ error: 'must be a positive number of milliseconds' }).positive({ error: 'must be a positive number of milliseconds' }).refine(Number.isFinite, { error: 'must be a positive number of milliseconds' }).optional() },
    { noun: 'a per-session cap', aliases: { max: 'total', tools: 'byTool', perTool: 'byTool', ttl: 'ttlMs' } }).optional(),
  onLimit: z.enum(['error', 'end'], { error: "must be 'error' or 'end'" }).optional(),
  store: z.custom<KeyValueSource>((v) => typeof v === 'object' && v !== null, { error: 'must be a key-value store or a run store' }).optional(),
}, { noun: 'a tool-call limit option', aliases: { run: 'perRun', session: 'perSession', exitBehavior: 'onLimit', behavior: 'onLimit', keyValues: 'store' } });

/** Outcomes of calls that did not run: they hold no place under a limit. */
const NOT_RUN = new Set(['denied', 'guardrail', 'validation', 'not_found', 'aborted']);

const counts = (outcome: ToolOutcome) => outcome.requiresApproval !== true && (outcome.error === undefined || !NOT_RUN.has(outcome.error.kind));

/**
 * A `tool` middleware (with a `model` part for `'end'`) that caps tool calls per tool and
 * overall, per run and per session. A call past a cap does not run: the model gets a tool
 * error naming the cap and what to do instead, or the run ends with `limit:tool_calls[:<tool>]`.
 * Run counts are in hook state (they survive suspend, resume and recovery, and an approved call
 * that runs after a resume is counted once); session counts are in `store`, added atomically,
 * so concurrent runs of a session never pass a cap together. Emits `tool_call_limit.reached`.
 *
 * @example agent.use(toolCallLimitMiddleware({ perRun: { total: 20, byTool: { search: 3 } }, perSession: { byTool: { send_email: 5 } }, store: sqliteStore('runs.db') }));
 */
export function toolCallLimitMiddleware(options: ToolCallLimitOptions): Middleware & { name: 'tool-call-limit' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('toolCallLimitMiddleware(options): options must be an object, e.g. { perRun: { byTool: { search: 3 } } }');
  parseOptions(optionsShape, options, 'toolCallLimitMiddleware');
  const { perRun, perSession, onLimit = 'error' } = options;
  if (!hasCaps(perRun) && !hasCaps(perSession)) throw new TypeError('toolCallLimitMiddleware: give a cap (perRun or perSession, with total or byTool), e.g. { perRun: { byTool: { search: 3 } } }');
  // Made once: every run of every agent using this instance shares it (memory by default).
  const values = hasCaps(perSession) ? keyValuesOf(options.store) : undefined;
  const ttl = perSession?.ttlMs === undefined ? undefined : { ttlMs: perSession.ttlMs };
  // Calls of this instance under way, by run and call id: settled when their count is.
  const settling = new Map<string, Promise<void>>();
  const states = hookState<LimitState>(NAME, () => ({ total: 0, byTool: {}, open: {} }));
  const stateOf = (ctx: ToolContext) => states.get(ctx);
  /** Change a copy of the hook state and keep it. */
  const change = (ctx: ToolContext, edit: (state: LimitState) => void): void => {
    const current = stateOf(ctx);
    const next: LimitState = { ...current, byTool: { ...current.byTool }, open: { ...current.open } };
    edit(next);
    states.set(ctx, next);
  };
  const uncount = (ctx: ToolContext, id: string, tool: string): void => change(ctx, (s) => {
    s.total--;
    // Tool names and call ids are keys of their own, `__proto__` or `constructor` too.
    const left = (ownValue(s.byTool, tool) ?? 1) - 1;
    if (left === 0) delete s.byTool[tool];
    else setOwn(s.byTool, tool, left);
    delete s.open[id];
  });

  /** The session counters a call of `tool` adds to, with their caps. */
  const sessionKeys = (ctx: ToolContext, tool: string) => {
    const keys: { key: string; hit: LimitHit }[] = [];
    const perTool = ownValue(perSession?.byTool, tool);
    if (perTool !== undefined) keys.push({ key: `${NAME}:${ctx.sessionId}:tool:${tool}`, hit: { limit: 'tool_calls', scope: 'session', tool, max: perTool } });
    if (perSession?.total !== undefined) keys.push({ key: `${NAME}:${ctx.sessionId}:total`, hit: { limit: 'tool_calls', scope: 'session', max: perSession.total } });
    return keys;
  };

  /** Count the call in the session, unless that passes a cap: then nothing stays added, and the cap is returned. */
  const enterSession = async (ctx: ToolContext, tool: string): Promise<LimitHit | undefined> => {
    const added: string[] = [];
    for (const { key, hit } of sessionKeys(ctx, tool)) {
      const total = await values!.add(key, 1, ttl);
      added.push(key);
      if (total > hit.max) {
        for (const undo of added) await values!.add(undo, -1);
        return hit;
      }
    }
    return undefined;
  };

  const leaveSession = async (ctx: ToolContext, tool: string) => {
    for (const { key } of sessionKeys(ctx, tool)) await values!.add(key, -1);
  };

  const refuse = (ctx: ToolContext, hit: LimitHit): ToolOutcome => {
    const message = limitMessage(hit, onLimit);
    ctx.emit?.({ type: 'tool_call_limit.reached', toolCallId: ctx.toolCallId, toolName: ctx.toolName, ...hit, onLimit });
    if (onLimit === 'end') {
      const state = stateOf(ctx);
      if (state.end === undefined) states.set(ctx, { ...state, end: { output: { ...hit, message }, reason: hit.tool === undefined ? 'limit:tool_calls' : `limit:tool_calls:${hit.tool}` } });
    }
    return toolError('tool_error', message, NAME);
  };

  return {
    name: NAME,
    tool: async function limitToolCalls(ctx: ToolContext, next: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
      const tool = ctx.toolName;
      const id = ctx.toolCallId;
      const key = `${ctx.runId}\u0000${id}`;
      let settled!: () => void;
      settling.set(key, new Promise<void>((resolve) => { settled = resolve; }));
      let counted = false;
      try {
        // Counted already (it entered, then the process died while it ran): not again.
        if (ownValue(stateOf(ctx).open, id) === undefined) {
          // Each check and count is made with no await between: calls of one turn run concurrently.
          for (;;) {
            const hit = runHit(stateOf(ctx), perRun, tool);
            if (hit === undefined) break;
            // At the cap only with calls still under way: they may not count (denied, waiting for
            // a human), so the verdict waits for them instead of depending on which came first.
            const running = Object.keys(stateOf(ctx).open).map((other) => settling.get(`${ctx.runId}\u0000${other}`)).filter((p) => p !== undefined);
            if (running.length === 0) return refuse(ctx, hit);
            await Promise.all(running);
          }
          change(ctx, (s) => { s.total++; setOwn(s.byTool, tool, (ownValue(s.byTool, tool) ?? 0) + 1); setOwn(s.open, id, tool); });
          const sessionHit = values === undefined ? undefined : await enterSession(ctx, tool);
          if (sessionHit !== undefined) {
            uncount(ctx, id, tool);
            return refuse(ctx, sessionHit);
          }
        }
        const outcome = await next();
        counted = counts(outcome);
        return outcome;
      } finally {
        const open = ownValue(stateOf(ctx).open, id);
        if (open !== undefined) {
          if (counted) change(ctx, (s) => { delete s.open[id]; });
          else uncount(ctx, id, open);
        }
        // The run's count is settled: calls waiting on this one may decide.
        settling.delete(key);
        settled();
        if (open !== undefined && !counted && values !== undefined) await leaveSession(ctx, open);
      }
    },
    // Between steps: the run ends where the model would be asked next.
    model: function endAtLimit(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> | GenerateResult {
      const end = (ctx.state.hookState[NAME] as LimitState | undefined)?.end;
      return end === undefined || ctx.purpose !== 'turn' ? next() : ctx.end(end.output, end.reason);
    },
  };
}

function hasCaps(caps: ToolCallCaps | undefined): boolean {
  return caps !== undefined && (caps.total !== undefined || (caps.byTool !== undefined && Object.keys(caps.byTool).length > 0));
}

/** The run cap another call of `tool` would pass: its own first, then the total. */
function runHit(state: LimitState, caps: ToolCallCaps | undefined, tool: string): LimitHit | undefined {
  const perTool = ownValue(caps?.byTool, tool);
  if (perTool !== undefined && (ownValue(state.byTool, tool) ?? 0) >= perTool) return { limit: 'tool_calls', scope: 'run', tool, max: perTool };
  if (caps?.total !== undefined && state.total >= caps.total) return { limit: 'tool_calls', scope: 'run', max: caps.total };
  return undefined;
}

/** What the model reads: which cap, that the call did not run, and what to do instead. */
function limitMessage(hit: LimitHit, onLimit: 'error' | 'end'): string {
  const where = hit.scope === 'run' ? 'in this run' : 'in this session';
  const times = (n: number) => (n === 1 ? 'once' : `${n} times`);
  const cap = hit.tool === undefined
    ? `at most ${hit.max} tool call${hit.max === 1 ? '' : 's'} ${where}`
    : `${hit.tool} may be called ${hit.max === 0 ? 'no times' : `at most ${times(hit.max)}`} ${where}`;
  const instead = onLimit === 'end'
    ? 'The run ends here.'
    : hit.tool === undefined
      ? 'Do not call any more tools: answer with the information you already have.'
      : `Do not call ${hit.tool} again: use the results you already have, or another tool.`;
  return `Tool call limit reached: ${cap}, so this call was not run. ${instead}`;
}
