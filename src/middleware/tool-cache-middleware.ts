import { createHash } from 'node:crypto';
import { z } from 'zod';
import { functionSchema, optionsSchema, parseOptions, type Middleware, type ToolContext, type ToolOutcome } from '../api.js';
import { keyValuesOf, type KeyValueSource } from '../stores/key-values.js';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'tool-cache.hit': { toolName: string; toolCallId: string };
  }
}

/**
 * Options of `toolCacheMiddleware`: which tools' results may be served again (by name, by a
 * predicate, or by the tools' own hints), for how long, and where they are kept.
 *
 * @example toolCacheMiddleware({ tools: ['get_weather', 'search_docs'], ttlMs: 10 * 60_000 })
 *
 * @inline
 */
export interface ToolCacheOptions {
  /** The tools whose results are cached: their names, or a predicate of the call. */
  tools?: readonly string[] | ((ctx: ToolContext) => boolean);
  /**
   * Also cache every tool that declares itself read-only and idempotent
   * (`annotations: { readOnlyHint: true, idempotentHint: true }`). Hints are not guarantees, and
   * a read-only tool's answer may still change with time: off by default.
   */
  annotated?: boolean;
  /** Where results are kept: a key-value store or a run store (default: this instance's memory). */
  store?: KeyValueSource;
  /** How long a result is served from the cache (default five minutes). */
  ttlMs?: number;
  /** Keeps caches apart that must not share results (a user, a tenant): its string becomes part of the key. */
  scope?: (ctx: ToolContext) => string;
  /** Told of each hit. */
  onHit?: (info: { toolName: string; toolCallId: string }) => void;
}

/**
 * `toolCacheMiddleware(…)`: the middleware, and `prime` to put a result in its cache ahead of
 * any call (a fixture, a warm start).
 *
 * @example const cache = toolCacheMiddleware({ tools: ['get_weather'] }); await cache.prime('get_weather', { city: 'Oslo' }, { forecast: 'snow' });
 *
 * @inline
 */
export type ToolCache = Middleware & {
  name: 'tool-cache';
  /** Keep `result` as the result of `toolName` called with `args` (under `scope`, when the cache has one). */
  prime(toolName: string, args: Record<string, unknown>, result: unknown, options?: { ttlMs?: number; scope?: string }): Promise<void>;
};

const toolCacheSchema = optionsSchema({
  tools: z.union([z.array(z.string({ error: 'must be tool names' })), functionSchema('a function (ctx) => boolean')], { error: "must be a list of tool names, e.g. ['get_weather'], or a function (ctx) => boolean" }).optional(),
  annotated: z.boolean({ error: 'must be true or false' }).optional(),
  store: z.custom<KeyValueSource>((value) => typeof value === 'object' && value !== null, { error: 'must be a key-value store or a run store (memoryKeyValues(), sqliteStore(…), postgresStore(…))' }).optional(),
  ttlMs: z.number({ error: 'must be a positive number of milliseconds' }).positive({ error: 'must be a positive number of milliseconds' }).refine(Number.isFinite, { error: 'must be a positive number of milliseconds' }).optional(),
  scope: functionSchema('a function (ctx) => string').optional(),
  onHit: functionSchema('a function (info) => void').optional(),
}, { noun: 'a tool-cache option', aliases: { ttl: 'ttlMs', maxAgeMs: 'ttlMs', names: 'tools', toolNames: 'tools', cacheable: 'tools', hints: 'annotated', readOnly: 'annotated', keyValues: 'store', partition: 'scope', namespace: 'scope' } });

/** What a cache entry holds: the result, and what the model read of it when a layer inside said. */
interface Entry {
  result: unknown;
  content?: ToolOutcome['content'];
}

/**
 * A `tool` middleware that settles a call of a cacheable tool with the result of an earlier
 * call with the same arguments, without running the tool: keyed by the tool's name and its
 * arguments as canonical JSON (key order aside), for `ttlMs`. A hit is reported as
 * `tool-cache.hit`, counted in `usage.toolCacheHits`, and its outcome says
 * `replacedBy: 'tool-cache'`. Only results are kept, never errors; a tool that needs approval is
 * never served from the cache. A hit settles the call before the permission rules, guardrails
 * and approval inside the tool stack: list only tools whose results any caller may see (or give
 * a `scope`).
 *
 * @example createAgent({ model, tools: [weather], middleware: [toolCacheMiddleware({ tools: ['get_weather'], ttlMs: 600_000 })] });
 */
export function toolCacheMiddleware(options: ToolCacheOptions): ToolCache {
  if (typeof options !== 'object' || options === null) throw new TypeError("toolCacheMiddleware(options): options must be an object, e.g. { tools: ['get_weather'] }");
  parseOptions(toolCacheSchema, options, 'toolCacheMiddleware');
  const { tools, annotated = false, ttlMs = 300_000, scope, onHit } = options;
  if (tools === undefined && !annotated) throw new TypeError("toolCacheMiddleware: say which tools' results to cache: tools: ['get_weather'], tools: (ctx) => …, or annotated: true");
  const values = keyValuesOf(options.store);
  const named = Array.isArray(tools) ? new Set<string>(tools) : undefined;
  const cacheable = (ctx: ToolContext): boolean => {
    // A call a human must approve is never settled by the cache: the approval would be skipped.
    if (ctx.tool === undefined || (ctx.tool.needsApproval !== undefined && ctx.tool.needsApproval !== false)) return false;
    if (named?.has(ctx.toolName) === true || (typeof tools === 'function' && tools(ctx))) return true;
    return annotated && ctx.tool.annotations?.readOnlyHint === true && ctx.tool.annotations.idempotentHint === true;
  };
  return {
    name: 'tool-cache',
    tool: async function toolCache(ctx: ToolContext, next: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
      if (!cacheable(ctx)) return next();
      // Taken before the tool runs: it may change its arguments' object.
      const key = toolKey(ctx.toolName, ctx.args, scope?.(ctx));
      const stored = (await values.get(key)) as Entry | undefined;
      if (typeof stored === 'object' && stored !== null && 'result' in stored) {
        ctx.countUsage('toolCacheHits', 1);
        onHit?.({ toolName: ctx.toolName, toolCallId: ctx.toolCallId });
        ctx.emit?.({ type: 'tool-cache.hit', toolName: ctx.toolName, toolCallId: ctx.toolCallId });
        return stored.content === undefined ? { result: stored.result, replacedBy: 'tool-cache' } : { result: stored.result, content: stored.content, replacedBy: 'tool-cache' };
      }
      const outcome = await next();
      const settled = outcome.error === undefined && outcome.requiresApproval !== true && outcome.nested === undefined && outcome.result !== undefined;
      if (settled) await values.set(key, outcome.content === undefined ? { result: outcome.result } : { result: outcome.result, content: outcome.content }, { ttlMs });
      return outcome;
    },
    async prime(toolName, args, result, primeOptions = {}) {
      await values.set(toolKey(toolName, args, primeOptions.scope), { result }, { ttlMs: primeOptions.ttlMs ?? ttlMs });
    },
  };
}

/** The key of a call: a SHA-256 of the tool's name, its arguments and the scope, as canonical JSON. */
function toolKey(toolName: string, args: Record<string, unknown>, scope: string | undefined): string {
  return `tool-cache:${createHash('sha256').update(canonical({ tool: toolName, args, scope: scope ?? null })).digest('hex')}`;
}

/** JSON with every object's keys sorted and undefined fields left out. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonical(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const fields = Object.keys(record).filter((k) => record[k] !== undefined && typeof record[k] !== 'function').sort();
  return `{${fields.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(',')}}`;
}
