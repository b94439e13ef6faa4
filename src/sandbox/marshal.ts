// What crosses into the sandbox for each hook method, and how what the hook changed comes back:
// copies in (plain fields at once, the transcript, run state and request when first read), the
// watched fields out as they are after the call; those that differ from what was sent are
// applied through the public context API as an in-process hook's changes would be (the
// transcript checks them the same way).
import { ToolError, type ModelContext, type ToolContext } from '../api.js';
import { ToolResult } from '../dialects/criogen/tool-result.js';
import type { CallHost } from './engine.js';

/** The kinds of context a hook method gets: a tool call's, a model call's, a criogen HookContext. */
type ContextKind = 'tool' | 'model' | 'hook';

const BASE = ['agentId', 'agentName', 'runId', 'sessionId', 'metadata', 'subagent'];
const EAGER: Record<ContextKind, string[]> = {
  tool: [...BASE, 'toolCallId', 'toolName', 'args', 'toolCall', 'resumedAfterApproval', 'step', 'idempotencyKey'],
  model: [...BASE, 'step', 'purpose', 'reply', 'ended'],
  hook: ['runId', 'modelCalls', 'hookState'],
};
const LAZY: Record<ContextKind, string[]> = { tool: ['messages', 'state'], model: ['messages', 'state', 'request'], hook: ['messages', 'state'] };
/** The fields whose changes count, as they would on the live context in the host. */
const WATCH: Record<ContextKind, string[]> = { tool: ['args', 'toolName', 'metadata', 'messages'], model: ['metadata', 'messages', 'request'], hook: ['messages'] };

/** For each hook method, what its arguments are: a context of a kind, or a plain value. */
export const SIGNATURES: Record<string, readonly (ContextKind | 'value')[]> = {
  preToolCall: ['tool'],
  postToolCall: ['tool', 'value'],
  preGenerate: ['model'],
  postGenerate: ['model', 'value'],
  onStart: ['hook'],
  beforeModel: ['hook'],
  afterModel: ['hook'],
  onEnd: ['hook', 'value'],
  beforeTool: ['value'],
  afterTool: ['value', 'value'],
};

type AnyContext = Record<string, unknown>;

/** The context of a call, with the JSON of each watched field as the sandbox got it. */
interface SentContext {
  kind: ContextKind;
  ctx: AnyContext;
  sent: Record<string, string | undefined>;
}

/** The JSON of a call's arguments, and the host side of its bridge (lazy reads, hook state, events). */
export function marshal(method: string, args: unknown[]): { payload: string; host: CallHost; context?: SentContext } {
  const kinds = SIGNATURES[method];
  let context: SentContext | undefined;
  const given = kinds.map((kind, i) => {
    const value = args[i];
    if (kind === 'value') return ToolError.is(value) ? { $: 'toolError', message: value.message, kind: value.kind } : { $: 'value', value };
    const ctx = value as AnyContext;
    const sent: Record<string, string | undefined> = {};
    context = { kind, ctx, sent };
    const fields: AnyContext = {};
    for (const key of EAGER[kind]) {
      fields[key] = ctx[key];
      if (WATCH[kind].includes(key)) sent[key] = JSON.stringify(ctx[key]);
    }
    return {
      $: 'ctx',
      fields,
      lazy: LAZY[kind],
      watch: WATCH[kind],
      linked: kind === 'model' && (ctx as unknown as ModelContext).request?.messages === ctx.messages,
      hookState: kind !== 'hook',
      emit: typeof ctx.emit === 'function',
    };
  });
  const host: CallHost = {
    read(field) {
      if (context === undefined || !LAZY[context.kind].includes(field)) return undefined;
      const json = JSON.stringify(field === 'request' ? plainRequest(context.ctx.request as Record<string, unknown>) : context.ctx[field]);
      if (field === 'request') context.sent.request = JSON.stringify(plainRequest(context.ctx.request as Record<string, unknown>, true));
      else if (WATCH[context.kind].includes(field)) context.sent[field] = json;
      return json;
    },
  };
  if (context?.kind !== 'hook' && context !== undefined) {
    const ctx = context.ctx as unknown as ToolContext;
    host.setHookState = (name, value) => ctx.setHookState(name, value);
    if (typeof ctx.emit === 'function') host.emit = (event) => ctx.emit!(event as Parameters<NonNullable<ToolContext['emit']>>[0]);
  }
  return { payload: JSON.stringify(given), host, context };
}

/** A request as JSON can carry it: its signal stays in the host (and, to compare, its messages). */
function plainRequest(request: Record<string, unknown>, withoutMessages = false): Record<string, unknown> {
  const { signal: _signal, ...rest } = request;
  if (withoutMessages) delete rest.messages;
  return rest;
}

/** What the sandbox answered for one call. */
interface Envelope {
  kind: string;
  value?: unknown;
  message?: string;
  name?: string;
  errorKind?: string;
  toolError?: boolean;
  type?: string;
  /** Per context argument, its watched fields as they are after the call. */
  after?: Record<string, unknown>[];
}

/**
 * Apply the context changes, then turn the answer into what the hook method returns (or throws)
 * in the host, as an in-process hook would: a ToolResult, a ToolError, a plain value, an error.
 */
export function unmarshal(answer: unknown, label: string, method: string, context: SentContext | undefined): unknown {
  const envelope = answer as Envelope;
  if (typeof envelope !== 'object' || envelope === null || typeof envelope.kind !== 'string') throw new TypeError(`sandboxed hook ${label}.${method}() gave an answer the host cannot read`);
  const after = Array.isArray(envelope.after) ? envelope.after[0] : undefined;
  if (context !== undefined && after !== undefined) applyChanges(context, after, `${label}.${method}()`);
  switch (envelope.kind) {
    case 'nothing':
      return undefined;
    case 'value':
      return envelope.value;
    case 'toolResult':
      return new ToolResult(envelope.value);
    case 'toolError':
      return toolErrorOf(envelope);
    case 'unserializable':
      throw new TypeError(`sandboxed hook ${label}.${method}() returned a ${envelope.type}, which cannot leave the sandbox; hooks there return JSON values, ToolResult or ToolError`);
    case 'threw': {
      if (envelope.toolError === true) throw toolErrorOf(envelope);
      const error = new Error(String(envelope.message ?? ''));
      error.name = typeof envelope.name === 'string' ? envelope.name : 'Error';
      throw error;
    }
    default:
      throw new TypeError(`sandboxed hook ${label}.${method}() gave an answer the host cannot read`);
  }
}

function toolErrorOf(envelope: Envelope): ToolError {
  const error = new ToolError(String(envelope.message ?? ''));
  return typeof envelope.errorKind === 'string' ? Object.assign(error, { kind: envelope.errorKind }) : error;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The watched fields that differ from what was sent, made so on the live context in the host. */
function applyChanges({ kind, ctx, sent }: SentContext, after: Record<string, unknown>, where: string): void {
  if (!isRecord(after)) return;
  const refuse = (field: string, what: string) => new TypeError(`${where} set ctx.${field} to ${what}`);
  for (const field of Object.keys(after)) {
    if (!WATCH[kind].includes(field)) continue;
    const next = after[field];
    if (JSON.stringify(next) === sent[field]) continue;
    if (field === 'args') {
      if (!isRecord(next)) throw refuse('args', 'something other than an object of arguments');
      (ctx as unknown as ToolContext).args = next;
    } else if (field === 'toolName') {
      if (typeof next !== 'string' || next === '') throw refuse('toolName', 'something other than a tool name');
      (ctx as unknown as ToolContext).toolName = next;
    } else if (field === 'metadata') {
      if (!isRecord(next)) throw refuse('metadata', 'something other than an object');
      replaceKeys(ctx.metadata as Record<string, unknown>, next);
    } else if (field === 'messages') {
      if (!Array.isArray(next)) throw refuse('messages', 'something other than an array of messages');
      spliceMessages(ctx.messages as unknown[], next);
    } else if (field === 'request') {
      if (!isRecord(next)) throw refuse('request', 'something other than an object');
      replaceKeys((ctx as unknown as ModelContext).request as Record<string, unknown>, next, new Set(['messages', 'signal']));
    }
  }
}

/**
 * Make `target`'s own keys those of `next` (but the `kept` ones, left as they are), changing only
 * what differs. Keys are read and set as own properties: a `__proto__` key the hook made stays a
 * key, as it would in-process, never the host object's prototype.
 */
function replaceKeys(target: Record<string, unknown>, next: Record<string, unknown>, kept: ReadonlySet<string> = new Set()): void {
  for (const key of Object.keys(target)) if (!kept.has(key) && !Object.hasOwn(next, key)) delete target[key];
  for (const [key, value] of Object.entries(next)) {
    if (!kept.has(key) && JSON.stringify(ownValue(target, key)) !== JSON.stringify(value)) put(target, key, value);
  }
}

const ownValue = (target: Record<string, unknown>, key: string): unknown => (Object.hasOwn(target, key) ? target[key] : undefined);

/** Set `key` as an own property, even `__proto__`, which plain assignment would take for the prototype. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Change the live transcript from the first message that differs: pushes stay pushes. */
function spliceMessages(live: unknown[], next: unknown[]): void {
  let same = 0;
  while (same < live.length && same < next.length && JSON.stringify(live[same]) === JSON.stringify(next[same])) same++;
  if (same === live.length && same === next.length) return;
  if (same === live.length) live.push(...next.slice(same));
  else live.splice(same, live.length - same, ...next.slice(same));
}
