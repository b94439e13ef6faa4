import { optionsSchema, parseOptions, textOf, wholeNumberSchema, type GenerateResult, type Message, type Middleware, type ModelContext, type ModelProvider, type ToolSpec } from '../api.js';
import { z } from 'zod';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'tool-selector.selected': { step: number; offered: number; tools: string[]; fallback: boolean };
  }
}

/**
 * Options of `toolSelectorMiddleware`: which model picks, how many tools it may keep, which are
 * always kept, and from how many tools on it is worth asking at all.
 *
 * @example toolSelectorMiddleware({ model: cheapModel, maxTools: 5, alwaysInclude: ['search'] })
 *
 * @inline
 */
export interface ToolSelectorOptions {
  /** The model that picks the tools (default: the agent's). A small, cheap one is usually enough. */
  model?: ModelProvider;
  /** The most tools the selector may keep, in the order it ranks them (always-included tools not counted). */
  maxTools?: number;
  /** Tools every request keeps, whatever the selector says (not offered to it, not counted in `maxTools`). */
  alwaysInclude?: string[];
  /**
   * The selector is asked only when the request has at least this many tools it could leave out
   * (default 5): for a handful of tools, the side call costs more than the specs it saves.
   */
  minTools?: number;
  /** How many messages before the user's last one the selector is shown as context (default 4; text only). */
  history?: number;
  /** Instructions for the selector, in place of the built-in ones. */
  prompt?: string;
}

/** The shape of `toolSelectorMiddleware`'s options, described once. */
const toolSelectorOptionsSchema = optionsSchema({
  model: z.custom<ModelProvider>((v) => typeof (v as ModelProvider | null)?.generate === 'function', { error: 'must be a model provider (an object with generate)' }).optional(),
  maxTools: wholeNumberSchema(1).optional(),
  alwaysInclude: z.array(z.string({ error: 'must be a tool name' }), { error: 'must be an array of tool names' }).optional(),
  minTools: wholeNumberSchema(1).optional(),
  history: wholeNumberSchema(0).optional(),
  prompt: z.string({ error: 'must be a string' }).optional(),
}, { noun: 'a tool selector option', aliases: { max: 'maxTools', limit: 'maxTools', always: 'alwaysInclude', include: 'alwaysInclude', keep: 'alwaysInclude', threshold: 'minTools', minimum: 'minTools', provider: 'model', selector: 'model', systemPrompt: 'prompt', instructions: 'prompt', context: 'history' } });

const DEFAULT_PROMPT =
  'You choose which tools an assistant is given for the next step of a conversation. Pick every tool ' +
  'that could help answer the user\'s latest message, most relevant first, and no tool that clearly cannot. ' +
  'Answer with JSON only: {"tools": ["name", …]}, using the names exactly as listed.';

/** Of one earlier message, at most this much text goes to the selector. */
const CONTEXT_CHARS = 500;
/** Of the user's latest message, at most this much. */
const QUERY_CHARS = 4000;

/** What the middleware keeps in hook state: the selection of one user turn (`tools: null`: all of them). */
interface Selection {
  turn: string;
  tools: string[] | null;
}

/** Per transcript: where its latest user message is, so finding it costs O(new messages) a call. */
interface Scan {
  length: number;
  last: Message | undefined;
  user: number;
  turn: string | undefined;
}

/** FNV-1a over a string: a short fingerprint of a user turn, not a secret. */
function fingerprint(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** The text of a message as context for the selector (tool calls and results named, not shown). */
function line(m: Message): string | undefined {
  if (m.role === 'system') return undefined;
  if (m.role === 'tool') return `tool result (${m.name})`;
  const text = clip(textOf(m.content), CONTEXT_CHARS);
  if (m.role === 'assistant' && m.toolCalls?.length) return `assistant: ${text}${text ? ' ' : ''}[called ${m.toolCalls.map((c) => c.name).join(', ')}]`;
  return text === '' ? undefined : `${m.role}: ${text}`;
}

/** The JSON object or array in a reply, also when the model wrapped it in prose or a code fence. */
function parseJson(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    const start = trimmed.search(/[[{]/);
    const end = Math.max(trimmed.lastIndexOf('}'), trimmed.lastIndexOf(']'));
    if (start === -1 || end <= start) return undefined;
    try {
      return JSON.parse(trimmed.slice(start, end + 1));
    } catch {
      return undefined;
    }
  }
}

/**
 * The names the selector chose, in its order and without repeats, or why its answer is no
 * selection: not JSON, no list of names, or only names that were not offered.
 */
export function readSelection(text: string, offered: ReadonlySet<string>): { tools: string[]; unknown: string[] } | { problem: string } {
  const parsed = parseJson(text);
  const list = Array.isArray(parsed) ? parsed : (parsed as { tools?: unknown } | undefined)?.tools;
  if (!Array.isArray(list) || !list.every((name) => typeof name === 'string')) return { problem: `the selector's answer is not {"tools": [names]}: ${clip(JSON.stringify(text), 120)}` };
  const tools = [...new Set(list as string[])].filter((name) => offered.has(name));
  const unknown = (list as string[]).filter((name) => !offered.has(name));
  if (tools.length === 0 && unknown.length > 0) return { problem: `the selector named only tools that were not offered: ${unknown.slice(0, 5).join(', ')}` };
  return { tools, unknown };
}

/**
 * A `model` middleware for agents with many tools: before the model call that starts a user
 * turn, a side call (`ctx.generate(…, 'select-tools')`, counted in usage) is shown the tools'
 * names and descriptions and the conversation, and answers which tools are relevant; the request
 * then offers only those (at most `maxTools`) and the `alwaysInclude` ones, in the agent's order.
 * The selection is kept in hook state for the rest of the user turn, so the tool turns that
 * follow pay no side call; a new user message selects again. An answer that is no selection
 * falls back to all the tools, with a warning. It narrows the request only: the agent keeps its
 * tools, and a call to one that was not offered is checked and runs as any other.
 *
 * @example agent.use(toolSelectorMiddleware({ model: smallModel, maxTools: 6, alwaysInclude: ['ask_human'] }));
 */
export function toolSelectorMiddleware(options: ToolSelectorOptions = {}): Middleware & { name: 'tool-selector' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('toolSelectorMiddleware(options): options must be an object');
  parseOptions(toolSelectorOptionsSchema, options, 'toolSelectorMiddleware');
  const { model, maxTools, minTools = 5, history = 4, prompt = DEFAULT_PROMPT } = options;
  const always = new Set(options.alwaysInclude ?? []);
  const scans = new WeakMap<Message[], Scan>();

  /** The fingerprint of the current user turn (undefined before any user message). */
  function turnOf(messages: Message[]): { turn: string; user: number } | undefined {
    let scan = scans.get(messages);
    if (scan === undefined || messages.length < scan.length || (scan.length > 0 && messages[scan.length - 1] !== scan.last)) {
      scan = { length: 0, last: undefined, user: -1, turn: undefined };
      scans.set(messages, scan);
    }
    let moved = false;
    for (let i = scan.length; i < messages.length; i++) {
      if (messages[i].role === 'user') {
        scan.user = i;
        moved = true;
      }
    }
    // The text is hashed once per user message, not once per call.
    if (moved) scan.turn = `${scan.user}:${fingerprint(textOf(messages[scan.user].content))}`;
    scan.length = messages.length;
    scan.last = messages[messages.length - 1];
    return scan.user < 0 || scan.turn === undefined ? undefined : { turn: scan.turn, user: scan.user };
  }

  async function select(ctx: ModelContext, candidates: ToolSpec[], user: number): Promise<string[] | null> {
    const messages = ctx.messages;
    const context = messages.slice(Math.max(0, user - history), user).map(line).filter((l): l is string => l !== undefined);
    const names = candidates.map((spec) => spec.name);
    const ask = [
      'Tools:',
      ...candidates.map((spec) => `- ${spec.name}: ${clip(spec.description.replace(/\s+/g, ' '), 300)}`),
      ...(context.length > 0 ? ['', 'Conversation so far:', ...context] : []),
      '', `The user's latest message:\n${clip(textOf(messages[user].content), QUERY_CHARS)}`,
      ...(maxTools !== undefined ? ['', `Choose at most ${maxTools} tools.`] : []),
    ].join('\n');
    const provider = model ?? ctx.provider;
    const schema = { type: 'object', properties: { tools: { type: 'array', items: { type: 'string', enum: names } } }, required: ['tools'], additionalProperties: false };
    let reply: GenerateResult;
    try {
      reply = await ctx.generate({
        ...(model !== undefined ? { provider: model } : {}),
        messages: [{ role: 'system', content: prompt }, { role: 'user', content: ask }],
        // A provider that cannot hold a reply to a schema reads the JSON shape from the prompt.
        ...(provider.structuredOutputs !== false ? { responseFormat: { type: 'json' as const, name: 'tool_selection', schema } } : {}),
      }, 'select-tools');
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      ctx.logger.warn(`toolSelectorMiddleware: the selector's call failed, so this turn offers all ${candidates.length} tools`, error);
      return null;
    }
    const read = readSelection(textOf(reply.message.content), new Set(names));
    if ('problem' in read) {
      ctx.logger.warn(`toolSelectorMiddleware: ${read.problem}; this turn offers all ${candidates.length} tools`);
      return null;
    }
    if (read.unknown.length > 0) ctx.logger.warn(`toolSelectorMiddleware: the selector named tools that were not offered, left out: ${read.unknown.slice(0, 5).join(', ')}`);
    return maxTools === undefined ? read.tools : read.tools.slice(0, maxTools);
  }

  return {
    name: 'tool-selector',
    // The agent's tools are the lead agent's: a sub-agent with many tools takes its own selector.
    scope: 'lead-only',
    model: async function selectTools(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      const tools = ctx.request.tools ?? [];
      const candidates = tools.filter((spec) => !always.has(spec.name));
      if (candidates.length < minTools) return next();
      const found = turnOf(ctx.messages);
      if (found === undefined) return next();
      const kept = ctx.state.hookState['tool-selector'] as Selection | undefined;
      let chosen: string[] | null;
      if (kept?.turn === found.turn) chosen = kept.tools;
      else {
        chosen = await select(ctx, candidates, found.user);
        ctx.setHookState('tool-selector', { turn: found.turn, tools: chosen } satisfies Selection);
        ctx.emit?.({ type: 'tool-selector.selected', step: ctx.step, offered: candidates.length, tools: chosen ?? candidates.map((spec) => spec.name), fallback: chosen === null });
      }
      if (chosen !== null) {
        const keep = new Set(chosen);
        ctx.request.tools = tools.filter((spec) => always.has(spec.name) || keep.has(spec.name));
      }
      return next();
    },
  };
}
