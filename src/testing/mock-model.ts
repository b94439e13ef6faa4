import { contentProblem, estimateTokens, textOf, type AssistantContentPart, type ProviderOptions } from '../core/vocabulary/content.js';
import type { AssistantMessage, Message, AssistantToolCall } from '../core/vocabulary/messages.js';
import type { GenerateOptions, GenerateResult, ModelProvider, StreamPart, TokenUsage } from '../core/vocabulary/model.js';
import { optionsSchema, parseOptions } from '../core/vocabulary/options.js';
import { replyParts } from '../features/streaming/reply-assembler.js';
import { z } from 'zod';

/**
 * One scripted reply: text, tool calls (with optional text), or an error to throw. A reply may
 * also carry reasoning (its text, or a reasoning part with `providerOptions`) or be given as
 * content parts whole.
 *
 * @example const script: MockReply[] = [{ reasoning: 'I should search.', toolCalls: [{ name: 'search', args: { q: 'koa' } }] }, { error: 'overloaded' }, 'Done.'];
 */
export type MockReply =
  | string
  | { text: string; reasoning?: MockReasoning; toolCalls?: MockToolCall[]; usage?: Partial<TokenUsage> }
  | { toolCalls: MockToolCall[]; text?: string; reasoning?: MockReasoning; usage?: Partial<TokenUsage> }
  | { content: AssistantContentPart[]; toolCalls?: MockToolCall[]; usage?: Partial<TokenUsage> }
  | { error: string | Error };

/**
 * A scripted reply's reasoning: its text, or the text with the provider data a real provider
 * would attach (a signature).
 *
 * @example const reasoning: MockReasoning = { text: 'Check the ledger first.', providerOptions: { anthropic: { signature: 'sig-1' } } };
 *
 * @inline
 */
export type MockReasoning = string | { text: string; providerOptions?: ProviderOptions };

/**
 * A tool call in a script: the tool's name, its arguments (an object, or raw text), and an id if you need one.
 *
 * @example const call: MockToolCall = { name: 'search', args: '{"q": "unterminated', id: 'c1' };
 */
export interface MockToolCall {
  name: string;
  /** An object, or raw text as a provider would pass it (to test malformed arguments). */
  args?: unknown;
  id?: string;
  providerOptions?: ProviderOptions;
}

/**
 * What the mock saw on one call: a snapshot of the messages, and the other request fields.
 *
 * @example expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', name: 'search' });
 *
 * @inline
 */
export interface MockCall {
  messages: Message[];
  /** The other request fields (`Omit` would lose the named ones to the index signature). */
  request: Pick<GenerateOptions, 'tools' | 'temperature' | 'maxTokens' | 'headers' | 'responseFormat'> & Record<string, unknown>;
}

/**
 * Options of `mockModel`: how slowly it answers, and how it streams.
 *
 * @example mockModel(['A long answer.'], { latencyMs: 50, streamChunk: 4, deltaLatencyMs: 5 })
 *
 * @inline
 */
export interface MockModelOptions {
  /** Wait this long before each reply (abortable by the request's signal). */
  latencyMs?: number;
  /** When streamed: characters per text delta (default: one delta per word). */
  streamChunk?: number;
  /** When streamed: wait this long before each delta (abortable). */
  deltaLatencyMs?: number;
  /** What the mock says of itself as `structuredOutputs` (default true: replies are taken as they are scripted). */
  structuredOutputs?: boolean;
  /**
   * Pick each reply by the transcript, not by the number of calls: a request that holds `k`
   * assistant messages gets `script[k]`. A fresh mock in a process that recovers or resumes a
   * run then answers where the run stands, as a real model would, instead of starting again at
   * reply 0. (An `{ error }` entry, which adds no message, answers every request made at its point.)
   * Without it, a fresh mock given a transcript its script already began refuses, naming this option.
   */
  resumable?: boolean;
}

/**
 * A scripted provider for tests and offline examples.
 *
 * @example const model = mockModel(['Hi']); await createAgent({ model }).run('Hello'); expect(model.remaining).toBe(0);
 */
export interface MockModel extends ModelProvider {
  readonly calls: MockCall[];
  /** Script entries not used yet (with `resumable`: the entries after the furthest one used). */
  readonly remaining: number;
}

const usageSchema = optionsSchema({ inputTokens: z.number().optional(), outputTokens: z.number().optional(), cachedInputTokens: z.number().optional(), cacheWriteInputTokens: z.number().optional() }, { noun: 'a usage field' }).optional();
const providerOptionsSchema = z.record(z.string(), z.record(z.string(), z.unknown()), { error: 'must be an object keyed by provider' }).optional();
const callSchema = optionsSchema({ name: z.string({ error: 'must be the tool\'s name' }), args: z.unknown().optional(), id: z.string().optional(), providerOptions: providerOptionsSchema }, { noun: 'a field of a scripted tool call', aliases: { tool: 'name', arguments: 'args', input: 'args', toolCallId: 'id' } });
const reasoningSchema = z.union([z.string(), optionsSchema({ text: z.string({ error: 'must be a string' }), providerOptions: providerOptionsSchema }, { noun: 'a field of scripted reasoning' })], { error: "must be the reasoning's text, or { text, providerOptions? }" });
const partsSchema = z.array(z.unknown(), { error: 'must be an array of content parts' }).superRefine((parts, ctx) => {
  const problem = contentProblem(parts, 'assistant', 'content');
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem.replace(/^content/, 'has a bad part: content') });
});

/** The shape of a script, described once: a typo in an entry fails at once, not as a wrong reply. */
const scriptSchema = z.array(z.union([
  z.string(),
  optionsSchema({ text: z.string().optional(), reasoning: reasoningSchema.optional(), content: partsSchema.optional(), toolCalls: z.array(callSchema).optional(), usage: usageSchema }, { noun: 'a field of a scripted reply', aliases: { message: 'text', thinking: 'reasoning', parts: 'content', calls: 'toolCalls', tools: 'toolCalls', tool_calls: 'toolCalls' } }),
  optionsSchema({ error: z.union([z.string(), z.instanceof(Error)]) }, { noun: 'a field of a scripted error' }),
], { error: 'must be a reply: text, { text?, reasoning?, content?, toolCalls? }, or { error }' }));

const mockOptionsSchema = optionsSchema({
  latencyMs: z.number().min(0).optional(),
  streamChunk: z.number().int().min(1).optional(),
  deltaLatencyMs: z.number().min(0).optional(),
  structuredOutputs: z.boolean({ error: 'must be true or false' }).optional(),
  resumable: z.boolean({ error: 'must be true or false' }).optional(),
}, { noun: 'an option of mockModel', aliases: { latency: 'latencyMs', delayMs: 'latencyMs', chunk: 'streamChunk', chunkSize: 'streamChunk', fromTranscript: 'resumable', byTranscript: 'resumable' } });

// A rough token estimate (4 characters a token), so usage is never zero in examples.
const tokens = (text: string) => Math.ceil(text.length / 4);

/** A scripted reply's content: its parts as given, reasoning then text, or the text alone. */
function scriptedContent(entry: Exclude<MockReply, { error: unknown }>): AssistantMessage['content'] {
  if (typeof entry === 'string') return entry;
  if ('content' in entry) return snapshot(entry.content);
  const text = entry.text ?? '';
  if (entry.reasoning === undefined) return text;
  const reasoning = typeof entry.reasoning === 'string' ? { type: 'reasoning' as const, text: entry.reasoning } : { type: 'reasoning' as const, ...snapshot(entry.reasoning) };
  return text === '' ? [reasoning] : [reasoning, { type: 'text', text }];
}

/**
 * A model that replies from a script, one entry per call, and records each call's messages as
 * a snapshot (so `model.calls[1].messages.at(-1)` is what it was sent then, not now).
 *
 * @example const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { q: 'x' } }] }, 'Done.']);
 */
export function mockModel(script: MockReply[], options: MockModelOptions = {}): MockModel {
  if (!Array.isArray(script)) throw new TypeError('mockModel(script): script must be an array of replies');
  parseOptions(scriptSchema, script, 'mockModel(script)');
  script.forEach((entry, i) => {
    if (typeof entry === 'object' && 'content' in entry && ('text' in entry || 'reasoning' in entry)) {
      throw new TypeError(`mockModel(script): script[${i}] has content and text or reasoning; give the reply either as content parts or as text (with reasoning)`);
    }
  });
  parseOptions(mockOptionsSchema, options, 'mockModel(script, options)');
  const calls: MockCall[] = [];
  let nextId = 1;
  /** How many entries the script has given, counting from its start (the furthest one used, plus one). */
  let used = 0;
  const model: MockModel = {
    name: 'mockModel',
    modelId: 'mock',
    structuredOutputs: options.structuredOutputs ?? true,
    calls,
    get remaining() {
      return Math.max(0, script.length - used);
    },
    generate,
    // The same scripted reply as parts: text and reasoning in deltas, then the tool calls, then the finish.
    async *stream(request: GenerateOptions): AsyncIterable<StreamPart> {
      const reply = await generate(request);
      for (const part of replyParts(reply.message)) {
        if (part.type !== 'text' && part.type !== 'reasoning') {
          yield part;
          continue;
        }
        const deltas = pieces(part.delta, options.streamChunk);
        // Reasoning keeps its provider data on its last delta, as real providers send a signature last.
        for (let i = 0; i < deltas.length; i++) {
          if (options.deltaLatencyMs) await sleep(options.deltaLatencyMs, request.signal);
          request.signal?.throwIfAborted();
          if (part.type === 'text' || i < deltas.length - 1) yield { type: part.type, delta: deltas[i], ...(part.type === 'reasoning' ? { id: part.id } : {}) };
          else yield { ...part, delta: deltas[i] };
        }
      }
      yield { type: 'finish', usage: reply.usage, finishReason: reply.finishReason };
    },
  };
  return model;

  async function generate(request: GenerateOptions): Promise<GenerateResult> {
    const { messages, signal, ...rest } = request;
    calls.push({ messages: snapshot(messages), request: snapshot(rest) });
    const n = calls.length;
    const index = options.resumable === true ? messages.filter((m) => m.role === 'assistant').length : n - 1;
    used = Math.max(used, Math.min(index + 1, script.length));
    if (options.resumable !== true && n === 1) refuseReplay(script, messages);
    if (options.latencyMs) await sleep(options.latencyMs, signal);
    signal?.throwIfAborted();
    const entry = script[index];
    if (entry === undefined) {
      const entries = `the script has only ${script.length} entr${script.length === 1 ? 'y' : 'ies'}`;
      throw new Error(options.resumable === true
        ? `mockModel: the request holds ${index} assistant message${index === 1 ? '' : 's'}, but ${entries}; add reply ${index + 1}`
        : `mockModel: the model was called ${n} time${n === 1 ? '' : 's'}, but ${entries}; add a reply for call ${n}`);
    }
    if (typeof entry === 'object' && 'error' in entry) throw typeof entry.error === 'string' ? new Error(entry.error) : entry.error;
    const message: AssistantMessage = { role: 'assistant', content: scriptedContent(entry) };
    const toolCalls = typeof entry === 'string' ? undefined : entry.toolCalls;
    if (toolCalls !== undefined && toolCalls.length > 0) {
      message.toolCalls = toolCalls.map((c): AssistantToolCall => {
        const call: AssistantToolCall = { id: c.id ?? `call_${nextId++}`, name: c.name, args: snapshot(c.args === undefined ? {} : c.args) };
        if (c.providerOptions !== undefined) call.providerOptions = snapshot(c.providerOptions);
        return call;
      });
    }
    const input = messages.reduce((sum, m) => sum + estimateTokens(m.content), 0);
    const output = estimateTokens(message.content) + (message.toolCalls ? tokens(jsonText(message.toolCalls)) : 0);
    const usage = typeof entry === 'string' ? undefined : entry.usage;
    return {
      message,
      usage: { inputTokens: usage?.inputTokens ?? input, outputTokens: usage?.outputTokens ?? output, ...(usage?.cachedInputTokens !== undefined ? { cachedInputTokens: usage.cachedInputTokens } : {}), ...(usage?.cacheWriteInputTokens !== undefined ? { cacheWriteInputTokens: usage.cacheWriteInputTokens } : {}) },
      finishReason: message.toolCalls ? 'tool_calls' : 'stop',
    };
  }
}

/**
 * A plain mock counts its calls, so a fresh one given a transcript its script already began (a
 * run resumed or recovered in another process, a session continued by a new agent) would answer
 * with reply 1 again: the run would call its first tools again, or pause for the same approval
 * for ever, with no error. That is refused, naming the fix, when the transcript's assistant
 * messages are the script's first replies, each in its place; a script of only the replies still
 * to come is what a plain mock is for, and passes.
 */
function refuseReplay(script: MockReply[], messages: readonly Message[]): void {
  const written = messages.filter((m): m is AssistantMessage => m.role === 'assistant');
  const k = written.length;
  if (k === 0 || script.length <= k || !written.every((m, j) => sameReply(script[j], m))) return;
  const which = k === 1 ? 'assistant message is the script\'s first reply' : `${k} assistant messages are the script's first ${k} replies`;
  throw new Error(`mockModel: the request continues a transcript whose ${which}, but a plain mockModel counts its calls, so this fresh one would `
    + 'answer with the first reply again. A run resumed or recovered in another process, or a session continued by a new agent, needs '
    + `mockModel(script, { resumable: true }), which picks each reply by the transcript (here reply ${k + 1}); or script only the replies still to come`);
}

/** Whether `message` is what the scripted `entry` makes: the same text and the same tool calls (names and arguments). */
function sameReply(entry: MockReply | undefined, message: AssistantMessage): boolean {
  if (entry === undefined || (typeof entry === 'object' && 'error' in entry)) return false;
  if (textOf(scriptedContent(entry)) !== textOf(message.content)) return false;
  const scripted = (typeof entry === 'string' ? [] : entry.toolCalls ?? []).map((c) => [c.name, c.args ?? {}]);
  return jsonText(scripted) === jsonText((message.toolCalls ?? []).map((c) => [c.name, c.args]));
}

/** A copy for the record (what a test reads back later); a value too deep to copy is kept as it is. */
function snapshot<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

/** Text for the token estimate; a value too deep for JSON.stringify (a hostile script) counts as empty. */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

function pieces(text: string, size: number | undefined): string[] {
  if (size !== undefined) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
