import { z } from 'zod';
import { functionSchema, optionsSchema, parseOptions, textOf, type GenerateResult, type GuardrailVerdict, type Message, type Middleware, type ModelContext } from '../api.js';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'guardrail.tripped': { step: number; guardrail: string; stage: 'input' | 'output'; reason: string };
  }
}

/**
 * What a model guardrail checks: the text, and the messages it comes from — for an input
 * guardrail the messages new since the model last replied (the user's input; with
 * `inputOn: 'every'`, later turns' tool results too), for an output guardrail the final reply.
 *
 * @example check: ({ text }) => (text.length > 10_000 ? { block: 'The input is too long' } : undefined)
 *
 * @inline
 */
export interface ModelGuardrailInput {
  text: string;
  messages: readonly Message[];
}

/**
 * A model guardrail's verdict: the tool guardrails' `GuardrailVerdict` (`{ block: reason }`
 * trips the wire, anything else passes), with optional `info` (JSON) kept in the run's output.
 *
 * @example const verdict: ModelGuardrailVerdict = { block: 'Off-topic', info: { topic: 'weather' } };
 *
 * @inline
 */
export type ModelGuardrailVerdict = GuardrailVerdict | { block: string; info?: unknown };

/**
 * A named check on the model's input or output. It gets the model call's context, so it may ask a
 * model itself (`ctx.generate(request, 'guardrail:<name>')`, counted in the run's usage).
 *
 * @example const onTopic: ModelGuardrail = { name: 'on-topic', check: async ({ text }, ctx) => {
 *   const { message } = await ctx.generate({ messages: [{ role: 'user', content: `Is this about cooking? yes/no\n${text}` }] }, 'guardrail:on-topic');
 *   return /yes/i.test(textOf(message.content)) ? undefined : { block: 'Not about cooking' }; } };
 */
export interface ModelGuardrail {
  /** Names the stop reason (`stop:guardrail:<name>`) and the verdict. */
  name: string;
  /** The check: `{ block: reason }` trips the wire; anything else passes. A throw fails the run. */
  check: (input: ModelGuardrailInput, ctx: ModelContext) => ModelGuardrailVerdict | Promise<ModelGuardrailVerdict>;
}

/**
 * What a run tripped by a guardrail ends with, as its `output` (stop reason `stop:guardrail:<name>`).
 *
 * @example if (result.stopReason.startsWith('stop:guardrail')) console.log((result.output as GuardrailTripped).reason);
 */
export interface GuardrailTripped {
  guardrail: string;
  stage: 'input' | 'output';
  reason: string;
  info?: unknown;
}

/**
 * Options of `guardrailsMiddleware`.
 *
 * @example guardrailsMiddleware({ input: [onTopic], output: [noLegalAdvice], parallel: true })
 *
 * @inline
 */
export interface GuardrailsOptions {
  /** Checks on the input before the model call. */
  input?: ModelGuardrail[];
  /** Checks on the final reply (one without tool calls) before the run completes with it. */
  output?: ModelGuardrail[];
  /**
   * Run the input guardrails while the model call is under way (default false): less latency;
   * when one trips, the model call is aborted and discarded; when all pass, the reply stands.
   */
  parallel?: boolean;
  /** Check the input on the run's first model call only (`'first'`, default) or before every model call (`'every'`). */
  inputOn?: 'first' | 'every';
}

const guardrailSchema = optionsSchema({ name: z.string().min(1, { error: 'must be a non-empty string' }), check: functionSchema('a function (input, ctx) => verdict') }, { noun: 'a field of a guardrail', aliases: { fn: 'check', guard: 'check', run: 'check' } });
const guardrailsOptionsSchema = optionsSchema({
  input: z.array(guardrailSchema).optional(),
  output: z.array(guardrailSchema).optional(),
  parallel: z.boolean({ error: 'must be true or false' }).optional(),
  inputOn: z.enum(['first', 'every'], { error: "must be 'first' or 'every'" }).optional(),
}, { noun: 'a guardrails option', aliases: { inputs: 'input', outputs: 'output', inputGuardrails: 'input', outputGuardrails: 'output', concurrent: 'parallel', runInParallel: 'parallel', every: 'inputOn' } });

type Trip = GuardrailTripped;

/** Run every guardrail at once; the first in the list that tripped is the verdict. */
async function checkAll(guardrails: readonly ModelGuardrail[], stage: Trip['stage'], input: ModelGuardrailInput, ctx: ModelContext): Promise<Trip | undefined> {
  const verdicts = await Promise.all(guardrails.map((g) => g.check(input, ctx)));
  for (let i = 0; i < verdicts.length; i++) {
    const v = verdicts[i];
    if (typeof v === 'object' && v !== null && typeof v.block === 'string') {
      const info = (v as { info?: unknown }).info;
      return { guardrail: guardrails[i].name, stage, reason: v.block, ...(info !== undefined ? { info } : {}) };
    }
  }
  return undefined;
}

/** The messages new since the model last replied (system messages aside): what the user, or the tools, just said. */
function newInput(messages: readonly Message[]): Message[] {
  let from = messages.length;
  while (from > 0 && messages[from - 1].role !== 'assistant') from--;
  return messages.slice(from).filter((m) => m.role !== 'system');
}

/**
 * A middleware of input and output guardrails for the model, with tripwires as OpenAI Agents
 * has them: an input guardrail checks what the model is about to read (before the call, or
 * alongside it with `parallel`), an output guardrail the final reply before the run completes
 * with it. A guardrail that returns `{ block: reason }` ends the run at once with stop reason
 * `stop:guardrail:<name>` and a `GuardrailTripped` output; the model's reply, if any, is
 * discarded (and, held from streams, never shown). A `guardrail.tripped` event says which.
 *
 * @example createAgent({ model, middleware: [guardrailsMiddleware({ input: [{ name: 'no-jailbreak', check: ({ text }) => (/ignore previous/i.test(text) ? { block: 'Jailbreak attempt' } : undefined) }] })] });
 */
export function guardrailsMiddleware(options: GuardrailsOptions): Middleware & { name: 'guardrails' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('guardrailsMiddleware(options): options must be an object');
  parseOptions(guardrailsOptionsSchema, options, 'guardrailsMiddleware');
  const { input = [], output = [], parallel = false, inputOn = 'first' } = options;
  if (input.length === 0 && output.length === 0) throw new TypeError('guardrailsMiddleware: give at least one guardrail, in input or output ({ input: [{ name, check }] })');

  const trip = (ctx: ModelContext, tripped: Trip): GenerateResult => {
    ctx.emit?.({ type: 'guardrail.tripped', step: ctx.step, guardrail: tripped.guardrail, stage: tripped.stage, reason: tripped.reason });
    return ctx.end(tripped, `stop:guardrail:${tripped.guardrail}`);
  };

  return {
    name: 'guardrails',
    // Text that an output guardrail (or, in parallel, an input one) may yet refuse is not shown first.
    holdStream: output.length > 0 || (parallel && input.length > 0),
    model: async function guardrails(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      const checksInput = input.length > 0 && (inputOn === 'every' || ctx.step === 1);
      let result: GenerateResult;
      if (!checksInput) result = await next();
      else {
        const messages = newInput(ctx.messages);
        const given: ModelGuardrailInput = { text: messages.map((m) => textOf(m.content)).join('\n'), messages };
        if (!parallel) {
          const tripped = await checkAll(input, 'input', given, ctx);
          if (tripped !== undefined) return trip(ctx, tripped);
          result = await next();
        } else {
          const answered = await raced(ctx, next, () => checkAll(input, 'input', given, ctx));
          if ('tripped' in answered) return trip(ctx, answered.tripped);
          result = answered.result;
        }
      }
      const reply = result.message;
      if (output.length === 0 || ctx.ended || (reply.toolCalls?.length ?? 0) > 0) return result;
      const tripped = await checkAll(output, 'output', { text: textOf(reply.content), messages: [reply] }, ctx);
      return tripped === undefined ? result : trip(ctx, tripped);
    },
  };
}

/**
 * The model call and the input checks at once. When the checks trip first, the call is aborted
 * (its signal is this layer's own) and not waited for; when they trip after it answered, its
 * reply is dropped; when they pass, the reply (or the call's error) stands.
 */
async function raced(ctx: ModelContext, next: () => Promise<GenerateResult>, checks: () => Promise<Trip | undefined>): Promise<{ tripped: Trip } | { result: GenerateResult }> {
  const outer = ctx.request.signal;
  const own = new AbortController();
  const forward = () => own.abort(outer?.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener('abort', forward, { once: true });
  ctx.request.signal = own.signal;
  const call = next().then((result) => ({ result }), (error: unknown) => ({ error }));
  const verdict = checks().then((tripped) => ({ tripped }), (error: unknown) => ({ checkError: error }));
  try {
    const first = await Promise.race([call, verdict]);
    if ('tripped' in first && first.tripped !== undefined) {
      own.abort(new Error(`input guardrail ${first.tripped.guardrail} tripped`));
      return { tripped: first.tripped };
    }
    const settled = 'tripped' in first || 'checkError' in first ? first : await verdict;
    if ('checkError' in settled) {
      own.abort(settled.checkError);
      throw settled.checkError;
    }
    if (settled.tripped !== undefined) return { tripped: settled.tripped };
    const answered = await call;
    if ('error' in answered) throw answered.error;
    return { result: answered.result };
  } finally {
    outer?.removeEventListener('abort', forward);
    ctx.request.signal = outer;
  }
}
