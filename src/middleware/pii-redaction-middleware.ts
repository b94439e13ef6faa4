import { createHmac } from 'node:crypto';
import { z } from 'zod';
import {
  functionSchema, optionsSchema, ownValue, parseOptions, setOwn, toolError,
  type BaseContext, type ContentPart, type GenerateResult, type Message, type Middleware, type ModelContext, type RunContext, type RunResult, type ToolContext, type ToolOutcome,
} from '../api.js';
import { BUILT_IN, DETECTORS, ORDER, type Detector, type PiiDetectorName, type PiiMatch } from './pii-detectors.js';

export type { PiiDetectorName, PiiMatch } from './pii-detectors.js';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'pii.redacted': PiiReport;
  }
}



/**
 * What happens to a value found: `mask` replaces it (`[EMAIL]`, or a partial mask), `hash`
 * replaces it with a stable salted token (`[EMAIL:1f2e3d4c5b6a]`: the same value, the same token),
 * `block` refuses what holds it (see the docs for each target).
 *
 * @example piiRedactionMiddleware({ mode: 'hash', salt: process.env.PII_SALT })
 *
 * @inline
 */
export type PiiMode = 'mask' | 'hash' | 'block';

/**
 * Where the middleware looks: the run's input messages (before anything records them), the
 * model's reply text (held from streams), the arguments of the model's tool calls (what the
 * transcript keeps and the tool receives), and tool results (before the model reads them).
 *
 * @example piiRedactionMiddleware({ targets: ['toolResults'] })
 *
 * @inline
 */
export type PiiTarget = 'input' | 'output' | 'toolArgs' | 'toolResults';


/**
 * A detector of your own: a pattern (its `g` flag is added) or a function returning the spans
 * (or the substrings) it found.
 *
 * @example { name: 'employeeId', pattern: /\bEMP-\d{6}\b/ }
 *
 * @inline
 */
export type PiiCustomDetector =
  | {
    /** Names the placeholder (`employeeId` → `[EMPLOYEE_ID]`) and `modes`' key. */
    name: string;
    /** What it finds. */
    pattern: RegExp;
  }
  | {
    name: string;
    /** What it finds in `text`: spans, or the substrings themselves (every occurrence is taken). */
    detect: (text: string) => readonly (PiiMatch | string)[];
  };

/**
 * The middleware `piiRedactionMiddleware` returns: a middleware, and its redactor for text of
 * your own (a log line) with the same rules.
 *
 * @example const pii = piiRedactionMiddleware(); logger.info(pii.redact(line));
 *
 * @inline
 */
export interface PiiRedactionMiddleware extends Middleware {
  name: 'pii-redaction';
  /** `text` as the middleware would redact it (a `block` detector's values masked). */
  redact(text: string): string;
}

/**
 * What one redaction found (counts by detector, never the values), for `onRedact` and the
 * `pii.redacted` event.
 *
 * @example onRedact: ({ target, found }) => metrics.add(target, found)
 *
 * @inline
 */
export interface PiiReport {
  target: PiiTarget;
  found: Record<string, number>;
  /** Detectors in `block` mode among them. */
  blocked: string[];
  toolCallId?: string;
}

/**
 * Options of `piiRedactionMiddleware`.
 *
 * @example piiRedactionMiddleware({ mode: 'mask', modes: { secret: 'block' }, custom: [{ name: 'ticket', pattern: /\bT-\d{5}\b/ }] })
 *
 * @inline
 */
export interface PiiRedactionOptions {
  /** Built-in detectors to use (default: all but `highEntropy`). */
  detectors?: PiiDetectorName[];
  /** Detectors of your own, run beside the built-in ones. */
  custom?: PiiCustomDetector[];
  /** What happens to what is found (default `mask`). */
  mode?: PiiMode;
  /** A mode per detector name, over `mode` (e.g. `{ secret: 'block' }`). */
  modes?: Record<string, PiiMode>;
  /** How `mask` writes a value: `'placeholder'` (`[EMAIL]`, the default), `'partial'` (`j***@example.com`, `**** **** **** 1111`), or a function. */
  mask?: 'placeholder' | 'partial' | ((value: string, detector: string) => string);
  /** The secret of `hash` tokens (required for `hash`): the same salt gives the same token in every process. */
  salt?: string;
  /** Where to look (default all four). */
  targets?: PiiTarget[];
  /** Told after each redaction, with counts only. */
  onRedact?: (report: PiiReport) => void;
}

const NAME = 'pii-redaction';
const label = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();


const modeSchema = z.enum(['mask', 'hash', 'block'], { error: "must be 'mask', 'hash' or 'block'" });
const targetSchema = z.enum(['input', 'output', 'toolArgs', 'toolResults'], { error: "must be 'input', 'output', 'toolArgs' or 'toolResults'" });
const customSchema = z.union([
  optionsSchema({ name: z.string().min(1), pattern: z.instanceof(RegExp, { error: 'must be a RegExp' }) }, { noun: 'a field of a custom detector', aliases: { regex: 'pattern', regexp: 'pattern' } }),
  optionsSchema({ name: z.string().min(1), detect: functionSchema('a function (text) => matches') }, { noun: 'a field of a custom detector', aliases: { fn: 'detect', match: 'detect' } }),
]);
const piiOptionsSchema = optionsSchema({
  detectors: z.array(z.enum(BUILT_IN, { error: `must be one of ${BUILT_IN.join(', ')}` })).optional(),
  custom: z.array(customSchema).optional(),
  mode: modeSchema.optional(),
  modes: z.record(z.string(), modeSchema).optional(),
  mask: z.union([z.enum(['placeholder', 'partial']), functionSchema('a function (value, detector) => string')], { error: "must be 'placeholder', 'partial' or a function (value, detector) => string" }).optional(),
  salt: z.string().min(1, { error: 'must be a non-empty string' }).optional(),
  targets: z.array(targetSchema).optional(),
  onRedact: functionSchema('a function (report) => void').optional(),
}, { noun: 'a PII redaction option', aliases: { patterns: 'custom', detect: 'detectors', target: 'targets', applyTo: 'targets', strategy: 'mode', secret: 'salt', onDetect: 'onRedact' } });

/** The outcome of redacting one text: the new text, and what was found by detector. */
interface Redacted {
  text: string;
  found: Record<string, number>;
  blocked: Set<string>;
}

/**
 * A redactor built from the options: finds, then rewrites. Exposed as `redact` on the
 * middleware, for text of your own (a log line) with the same rules.
 */
class Redactor {
  readonly #detectors: Detector[];
  constructor(private readonly o: PiiRedactionOptions) {
    const named = (o.detectors ?? ORDER.filter((d) => d !== 'highEntropy')).slice().sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b)).map((d) => DETECTORS[d]);
    const custom = (o.custom ?? []).map((c): Detector => ('pattern' in c
      ? { name: c.name, pattern: new RegExp(c.pattern.source, c.pattern.flags.includes('g') ? c.pattern.flags : `${c.pattern.flags}g`) }
      : { name: c.name, pattern: /$^/g, detect: c.detect }));
    // Custom ones first: a user's pattern is more specific than ours.
    this.#detectors = [...custom, ...named];
  }

  modeOf(detector: string): PiiMode {
    return ownValue(this.o.modes, detector) ?? this.o.mode ?? 'mask';
  }

  /** Every match in `text`, overlaps resolved (earlier detector, then the longer match), in order. */
  #find(text: string): { start: number; end: number; detector: Detector }[] {
    const all: { start: number; end: number; detector: Detector }[] = [];
    for (const detector of this.#detectors) {
      if (detector.detect !== undefined) {
        for (const m of detector.detect(text)) {
          if (typeof m === 'string') { for (let at = m === '' ? -1 : text.indexOf(m); at !== -1; at = text.indexOf(m, at + m.length)) all.push({ start: at, end: at + m.length, detector }); }
          else if (m.end > m.start) all.push({ start: m.start, end: m.end, detector });
        }
        continue;
      }
      detector.pattern.lastIndex = 0;
      for (let m = detector.pattern.exec(text); m !== null; m = detector.pattern.exec(text)) {
        if (m[0] === '') { detector.pattern.lastIndex++; continue; }
        if (detector.valid === undefined || detector.valid(m[0])) all.push({ start: m.index, end: m.index + m[0].length, detector });
      }
    }
    if (all.length < 2) return all;
    const rank = new Map(this.#detectors.map((d, i) => [d, i]));
    all.sort((a, b) => rank.get(a.detector)! - rank.get(b.detector)! || b.end - b.start - (a.end - a.start));
    const kept: typeof all = [];
    for (const m of all) if (!kept.some((k) => m.start < k.end && k.start < m.end)) kept.push(m);
    return kept.sort((a, b) => a.start - b.start);
  }

  redact(text: string): Redacted {
    const found: Record<string, number> = {};
    const blocked = new Set<string>();
    if (text.length < 6) return { text, found, blocked };
    const matches = this.#find(text);
    if (matches.length === 0) return { text, found, blocked };
    let out = '';
    let at = 0;
    for (const { start, end, detector } of matches) {
      const value = text.slice(start, end);
      const mode = this.modeOf(detector.name);
      setOwn(found, detector.name, (ownValue(found, detector.name) ?? 0) + 1);
      if (mode === 'block') blocked.add(detector.name);
      out += text.slice(at, start) + this.#replacement(value, detector, mode);
      at = end;
    }
    return { text: out + text.slice(at), found, blocked };
  }

  #replacement(value: string, detector: Detector, mode: PiiMode): string {
    if (mode === 'hash') {
      const digest = createHmac('sha256', this.o.salt!).update(`${detector.name}:${(detector.normal ?? String)(value)}`).digest('hex');
      return `[${label(detector.name)}:${digest.slice(0, 12)}]`;
    }
    const mask = this.o.mask ?? 'placeholder';
    if (typeof mask === 'function' && mode === 'mask') return mask(value, detector.name);
    if (mask === 'partial' && mode === 'mask') return partial(value, detector.name) ?? `[${label(detector.name)}]`;
    return `[${label(detector.name)}]`;
  }
}

/** A partial mask that keeps what identifies nobody: an e-mail's domain, a number's last digits. */
function partial(value: string, detector: string): string | undefined {
  if (detector === 'email') {
    const at = value.lastIndexOf('@');
    return `${value[0]}***${value.slice(at)}`;
  }
  if (detector === 'creditCard' || detector === 'phone' || detector === 'iban') {
    const keep = detector === 'phone' ? 2 : 4;
    let left = value.replace(/[^A-Za-z0-9]/g, '').length - keep;
    return value.replace(/[A-Za-z0-9]/g, (ch) => (left-- > 0 ? '*' : ch));
  }
  return undefined;
}

/** `into` plus `more`, by detector. */
function tally(into: Redacted, more: Redacted): void {
  for (const [k, n] of Object.entries(more.found)) setOwn(into.found, k, (ownValue(into.found, k) ?? 0) + n);
  for (const k of more.blocked) into.blocked.add(k);
}

/** Every string in a JSON value redacted (keys kept); returns the same value when nothing was found. */
function redactValue(redactor: Redactor, value: unknown, seen: Redacted): unknown {
  if (typeof value === 'string') {
    const r = redactor.redact(value);
    tally(seen, r);
    return r.text;
  }
  if (Array.isArray(value)) {
    const out = value.map((v) => redactValue(redactor, v, seen));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const redacted = redactValue(redactor, v, seen);
      // A `__proto__` key of the value stays a key of the copy.
      setOwn(out, k, redacted);
      if (redacted !== v) changed = true;
    }
    return changed ? out : value;
  }
  return value;
}

/** Content redacted: a string, or its text and reasoning parts. */
function redactContent<T extends string | readonly ContentPart[]>(redactor: Redactor, content: T, seen: Redacted): T {
  if (typeof content === 'string') return redactValue(redactor, content, seen) as T;
  return content.map((part) => (part.type === 'text' || part.type === 'reasoning' ? { ...part, text: redactValue(redactor, part.text, seen) as string } : part)) as unknown as T;
}

const empty = (): Redacted => ({ text: '', found: {}, blocked: new Set() });
const anything = (r: Redacted) => Object.keys(r.found).length > 0;

/** What the middleware keeps in the run's hook state: the calls it refused, by id (never a value). */
interface PiiState { blockedCalls?: string[] }

/**
 * A middleware that finds personal data and secrets — e-mail addresses, phone numbers, card
 * numbers (Luhn-checked), IBANs (mod-97-checked), IP addresses, API keys and private keys, and
 * patterns of your own — and masks, hashes or blocks them in the run's input (before the state,
 * a store, an event or a span sees it), the model's replies (held from streams), the arguments
 * of its tool calls and tool results. What it removed is recorded nowhere: events and the
 * `pii.redacted` report carry counts only. Install it innermost of the content layers, so every
 * other layer sees redacted text.
 *
 * @example createAgent({ model, middleware: [piiRedactionMiddleware({ modes: { secret: 'block' } })] });
 */
export function piiRedactionMiddleware(options: PiiRedactionOptions = {}): PiiRedactionMiddleware {
  if (typeof options !== 'object' || options === null) throw new TypeError('piiRedactionMiddleware(options): options must be an object');
  parseOptions(piiOptionsSchema, options, 'piiRedactionMiddleware');
  const modes = [options.mode, ...Object.values(options.modes ?? {})];
  if (modes.includes('hash') && options.salt === undefined) throw new TypeError("piiRedactionMiddleware: mode 'hash' needs a salt (salt: process.env.PII_SALT): the same salt makes the same value the same token in every process");
  const known = new Set<string>([...(options.detectors ?? ORDER), ...(options.custom ?? []).map((c) => c.name)]);
  for (const name of Object.keys(options.modes ?? {})) if (!known.has(name)) throw new TypeError(`piiRedactionMiddleware: modes.${name} names no detector in use; use ${[...known].join(', ')}`);
  const redactor = new Redactor(options);
  const targets = new Set<PiiTarget>(options.targets ?? ['input', 'output', 'toolArgs', 'toolResults']);
  // The input messages this instance refused (block mode), until the run layer ends their run: in
  // memory only, since prepareInput runs before the run has a state.
  const refusedInput = new WeakMap<Message, Redacted>();

  const report = (ctx: Pick<BaseContext, 'emit' | 'countUsage'> | undefined, target: PiiTarget, seen: Redacted, toolCallId?: string) => {
    const r: PiiReport = { target, found: seen.found, blocked: [...seen.blocked], ...(toolCallId !== undefined ? { toolCallId } : {}) };
    options.onRedact?.(r);
    if (ctx === undefined) return;
    ctx.countUsage('piiRedactions', Object.values(seen.found).reduce((a, b) => a + b, 0));
    ctx.emit?.({ type: 'pii.redacted', ...r });
  };
  const inputFound = new WeakMap<Message, Redacted>();

  return {
    name: NAME,
    holdStream: targets.has('output'),
    // What it removes must not be kept by the layer trace either (its changes' `before`, and what
    // the layers inside it saw of a raw result or reply).
    traceValues: false,
    redact: (text: string) => redactor.redact(text).text,

    prepareInput: targets.has('input') ? function redactInput(messages: Message[]): Message[] {
      return messages.map((message) => {
        const seen = empty();
        const content = redactContent(redactor, message.content, seen);
        const calls = message.role === 'assistant' && message.toolCalls !== undefined ? message.toolCalls.map((c) => ({ ...c, args: redactValue(redactor, c.args, seen) })) : undefined;
        if (!anything(seen)) return message;
        const redacted = { ...message, content, ...(calls !== undefined ? { toolCalls: calls } : {}) } as Message;
        inputFound.set(redacted, seen);
        if (seen.blocked.size > 0) refusedInput.set(redacted, seen);
        return redacted;
      });
    } : undefined,

    run: async function piiInput(ctx: RunContext, next: () => Promise<RunResult>): Promise<RunResult> {
      if (ctx.resumed) return next();
      const seen = empty();
      let refused = false;
      for (const message of ctx.input) {
        const found = inputFound.get(message);
        if (found !== undefined) tally(seen, found);
        if (refusedInput.has(message)) refused = true;
      }
      if (anything(seen)) report(ctx, 'input', seen);
      if (refused) return ctx.end({ blocked: 'pii', target: 'input', detectors: [...seen.blocked] }, 'stop:pii');
      return next();
    },

    model: async function piiReply(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      const result = await next();
      if (ctx.ended) return result;
      const message = result.message;
      const text = empty();
      const content = targets.has('output') ? redactContent(redactor, message.content, text) : message.content;
      if (anything(text)) report(ctx, 'output', text);
      if (text.blocked.size > 0) return ctx.end({ blocked: 'pii', target: 'output', detectors: [...text.blocked] }, 'stop:pii');
      let toolCalls = message.toolCalls;
      if (targets.has('toolArgs') && toolCalls !== undefined) {
        const refused: string[] = [];
        toolCalls = toolCalls.map((call) => {
          const seen = empty();
          const args = redactValue(redactor, call.args, seen);
          if (!anything(seen)) return call;
          report(ctx, 'toolArgs', seen, call.id);
          if (seen.blocked.size > 0) refused.push(call.id);
          return { ...call, args };
        });
        if (refused.length > 0) {
          const state = (ctx.state.hookState[NAME] as PiiState | undefined) ?? {};
          ctx.setHookState(NAME, { blockedCalls: [...(state.blockedCalls ?? []), ...refused] } satisfies PiiState);
        }
      }
      if (content === message.content && toolCalls === message.toolCalls) return result;
      return { ...result, message: { ...message, content, ...(toolCalls !== undefined ? { toolCalls } : {}) } };
    },

    tool: async function piiTool(ctx: ToolContext, next: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
      const refused = (ctx.state.hookState[NAME] as PiiState | undefined)?.blockedCalls;
      if (refused?.includes(ctx.toolCallId)) return ctx.deny(`The arguments of this ${ctx.toolName} call held personal data or a secret; it was not run`, NAME);
      const outcome = await next();
      if (!targets.has('toolResults') || outcome.requiresApproval === true) return outcome;
      const seen = empty();
      const result = redactValue(redactor, outcome.result, seen);
      const error = outcome.error === undefined ? undefined : { ...outcome.error, message: redactValue(redactor, outcome.error.message, seen) as string };
      const content = outcome.content === undefined ? undefined : redactContent(redactor, outcome.content, seen);
      if (!anything(seen)) return outcome;
      report(ctx, 'toolResults', seen, ctx.toolCallId);
      if (seen.blocked.size > 0) return toolError('guardrail', `The result of ${ctx.toolName} held personal data or a secret (${[...seen.blocked].join(', ')}); it was withheld`, NAME);
      return { ...outcome, result, ...(error !== undefined ? { error } : {}), ...(content !== undefined ? { content } : {}) };
    },
  };
}
