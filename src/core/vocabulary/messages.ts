import { contentProblem, textOf, type AssistantContentPart, type ProviderOptions, type ToolContentPart, type UserContentPart } from './content.js';
import { preview } from './json.js';

/**
 * A tool call inside an assistant message, as the model wrote it: `args` is an object, or the
 * raw JSON text a provider got. (The criogen dialect's `ToolCall` is a hook's view of a call.)
 *
 * @example const calls: AssistantToolCall[] = [{ id: 'call_1', name: 'search', args: { query: 'koa' } }];
 */
export interface AssistantToolCall {
  id: string;
  name: string;
  args: unknown;
  /** What the provider attached to the call and needs back (e.g. Gemini's thought signature). */
  providerOptions?: ProviderOptions;
}

/**
 * Instructions for the model; the agent's `instructions` open every transcript as one.
 *
 * @example const m: SystemMessage = { role: 'system', content: 'Answer in French.' };
 */
export interface SystemMessage {
  role: 'system';
  content: string;
  /** Provider data for the whole message (e.g. `{ anthropic: { cacheControl: { type: 'ephemeral' } } }`): passed on by providers that read it (the AI SDK adapter), ignored by the others. */
  providerOptions?: ProviderOptions;
}

/**
 * What the user said: text, or parts (text, images, files).
 *
 * @example const m: UserMessage = { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: 'https://example.com/cat.png' }] };
 */
export interface UserMessage {
  role: 'user';
  content: string | UserContentPart[];
  /** Provider data for the whole message (e.g. `{ anthropic: { cacheControl: { type: 'ephemeral' } } }`): passed on by providers that read it (the AI SDK adapter), ignored by the others. */
  providerOptions?: ProviderOptions;
}

/**
 * A reply of the model: its text (or parts: text, reasoning, files), and the tool calls it asks for.
 *
 * @example const m: AssistantMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search', args: { q: 'koa' } }] };
 */
export interface AssistantMessage {
  role: 'assistant';
  content: string | AssistantContentPart[];
  toolCalls?: AssistantToolCall[];
  /** Provider data for the whole message (e.g. `{ anthropic: { cacheControl: { type: 'ephemeral' } } }`): passed on by providers that read it (the AI SDK adapter), ignored by the others. */
  providerOptions?: ProviderOptions;
}

/**
 * The result of one tool call, as the model sees it: text (JSON for results that are not
 * strings), or parts when the tool says so (`toModelOutput`); `metadata.error` says why a call
 * failed, `metadata.replacedBy` who supplied its result.
 *
 * @example const failed = messages.filter((m): m is ToolMessage => m.role === 'tool' && m.metadata?.error !== undefined);
 */
export interface ToolMessage {
  role: 'tool';
  toolCallId: string;
  name: string;
  content: string | ToolContentPart[];
  metadata?: Record<string, unknown>;
  /** Provider data for the whole message (e.g. `{ anthropic: { cacheControl: { type: 'ephemeral' } } }`): passed on by providers that read it (the AI SDK adapter), ignored by the others. */
  providerOptions?: ProviderOptions;
}

/**
 * One transcript entry. Plain JSON, so a transcript can be stored and resumed anywhere.
 *
 * @example const m: Message = { role: 'user', content: 'Hello' };
 */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/**
 * What `run`, `send` and `stream` accept: a user's text, or messages to append.
 *
 * @example await agent.run([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
 */
export type RunInput = string | Message | Message[];

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

const SHAPE = "{ role: 'system' | 'user' | 'assistant' | 'tool', content: string | parts }";

/**
 * What is wrong with `value` as a transcript message, naming it by `path`; undefined when it is
 * one. An assistant message's tool calls need ids and names, a tool message its call's id and
 * the tool's name: the model matches a result to its call by them.
 */
export function messageProblem(value: unknown, path: string): string | undefined {
  if (typeof value !== 'object' || value === null || !ROLES.has((value as Message).role)) return `${path} is not a message: expected ${SHAPE}`;
  const message = value as Message;
  if (message.role === 'assistant') return assistantProblem(message, path);
  // A string is the common case: it costs one typeof.
  if (typeof message.content !== 'string') {
    const problem = contentProblem(message.content, message.role, `${path}.content`);
    if (problem !== undefined) return problem;
  }
  if (message.role === 'tool' && (typeof message.toolCallId !== 'string' || typeof message.name !== 'string')) {
    return `${path} is a tool message without toolCallId and name (strings): the model matches a tool result to its call by them`;
  }
  return undefined;
}

/** What is wrong with `value` as an assistant message (a reply), naming it by `path`. */
export function assistantProblem(value: unknown, path: string): string | undefined {
  const m = value as Partial<AssistantMessage> | null;
  if (typeof m !== 'object' || m === null || m.role !== 'assistant' || (typeof m.content !== 'string' && !Array.isArray(m.content))) {
    return `${path} must be an assistant message { role: 'assistant', content: string | parts, toolCalls? }, got ${preview(value, 80)}`;
  }
  if (typeof m.content !== 'string') {
    const problem = contentProblem(m.content, 'assistant', `${path}.content`);
    if (problem !== undefined) return problem;
  }
  const calls = m.toolCalls;
  if (calls !== undefined && (!Array.isArray(calls) || calls.some((c) => typeof c !== 'object' || c === null || typeof c.id !== 'string' || typeof c.name !== 'string'))) {
    return `${path}.toolCalls must be a list of { id: string, name: string, args }`;
  }
  return undefined;
}

/** Turn run input into messages, naming exactly what is wrong with bad input. */
export function inputMessages(input: RunInput): Message[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const list = Array.isArray(input) ? input : [input];
  list.forEach((m, i) => {
    const problem = messageProblem(m, Array.isArray(input) ? `input[${i}]` : 'input');
    if (problem !== undefined) throw new TypeError(problem);
  });
  return list;
}

/** The text of the last assistant message, scanning back from the end (once per run). */
export function lastAssistantText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'assistant') return typeof m.content === 'string' ? m.content : textOf(m.content);
  }
  return '';
}
