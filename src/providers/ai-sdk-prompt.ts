// A koagent request in the AI SDK's call-options format (identical in spec V2 and V3).
import { textOf } from '../core/content.js';
import type { Message, ToolMessage } from '../core/messages.js';
import type { GenerateOptions } from '../core/model.js';
import { parseArguments } from './openai-wire.js';

/**
 * The part of the AI SDK's prompt format koagent produces (identical in spec V2 and V3).
 *
 * @example const m: AiSdkPromptMessage = { role: 'user', content: [{ type: 'text', text: 'Hi' }] };
 */
export type AiSdkPromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<{ type: 'text'; text: string }> }
  | { role: 'assistant'; content: Array<{ type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }> }
  | { role: 'tool'; content: Array<{ type: 'tool-result'; toolCallId: string; toolName: string; output: { type: 'text' | 'error-text'; value: string } }> };

/**
 * The call options koagent passes to an AI SDK model's `doGenerate` / `doStream`.
 *
 * @example const model: AiSdkLanguageModel = { specificationVersion: 'v3', provider: 'x', modelId: 'y', doGenerate: async (options: AiSdkCallOptions) => callMyServer(options.prompt), doStream: async () => { throw new Error('no streaming'); } };
 */
export interface AiSdkCallOptions {
  prompt: AiSdkPromptMessage[];
  // `any`: each spec version types these with its own JSONSchema7 / provider-options types, and a
  // model's doGenerate must accept ours whichever version it was built against.
  tools?: Array<{ type: 'function'; name: string; description?: string; inputSchema: any }>;
  toolChoice?: { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
  providerOptions?: any;
}

/** A koagent request as AI SDK call options. */
export function callOptions(request: GenerateOptions): AiSdkCallOptions {
  const options: AiSdkCallOptions = { prompt: aiSdkPrompt(request.messages) };
  if (request.tools?.length) options.tools = request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, inputSchema: t.parameters }));
  const choice = request.toolChoice;
  if (choice === 'auto' || choice === 'none' || choice === 'required') options.toolChoice = { type: choice };
  else if (typeof choice === 'object' && choice !== null && typeof (choice as { name?: unknown }).name === 'string') options.toolChoice = { type: 'tool', toolName: (choice as { name: string }).name };
  if (request.maxTokens !== undefined) options.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) options.temperature = request.temperature;
  const stop = request.stop;
  if (stop !== undefined) options.stopSequences = Array.isArray(stop) ? stop : [String(stop)];
  for (const key of ['topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'providerOptions'] as const) {
    if (request[key] !== undefined) (options as unknown as Record<string, unknown>)[key] = request[key];
  }
  if (request.signal !== undefined) options.abortSignal = request.signal;
  if (request.headers !== undefined) options.headers = request.headers;
  return options;
}

/**
 * koagent's transcript in the AI SDK's prompt format: text as text parts, tool calls as
 * `tool-call` parts, and each run of tool messages as one `tool` message of `tool-result`
 * parts (an error outcome as `error-text`), as the AI SDK itself groups them.
 */
export function aiSdkPrompt(messages: readonly Message[]): AiSdkPromptMessage[] {
  const prompt: AiSdkPromptMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system') prompt.push({ role: 'system', content: m.content });
    else if (m.role === 'user') prompt.push({ role: 'user', content: [{ type: 'text', text: textOf(m.content) }] });
    else if (m.role === 'assistant') {
      const text = textOf(m.content);
      const content: Extract<AiSdkPromptMessage, { role: 'assistant' }>['content'] = text === '' ? [] : [{ type: 'text', text }];
      for (const call of m.toolCalls ?? []) {
        content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: typeof call.args === 'string' ? parseArguments(call.args) : call.args });
      }
      prompt.push({ role: 'assistant', content });
    } else {
      const result = toolResult(m);
      const last = prompt[prompt.length - 1];
      if (last?.role === 'tool') last.content.push(result);
      else prompt.push({ role: 'tool', content: [result] });
    }
  }
  return prompt;
}

function toolResult(m: ToolMessage): Extract<AiSdkPromptMessage, { role: 'tool' }>['content'][number] {
  const failed = m.metadata?.error !== undefined;
  return { type: 'tool-result', toolCallId: m.toolCallId, toolName: m.name, output: { type: failed ? 'error-text' : 'text', value: textOf(m.content) } };
}

