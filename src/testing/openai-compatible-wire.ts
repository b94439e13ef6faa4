// What the loopback server writes: `chat.completion` objects and `chat.completion.chunk` SSE
// events, field for field as OpenAI's API reference shows them, built from a scripted reply.

/**
 * One tool call of a scripted reply.
 *
 * @example const call: ScriptedToolCall = { name: 'get_weather', arguments: { city: 'Paris' } };
 */
export interface ScriptedToolCall {
  /** The call's id; `call_<n>_<i>` when not given (`n` the response's number, `i` the call's place). */
  id?: string;
  name: string;
  /** The `arguments` text as the server sends it (a string need not be valid JSON), or an object sent as its JSON. */
  arguments: string | Record<string, unknown>;
}

/**
 * What the model says in one scripted reply of an `openaiCompatibleServer`.
 *
 * @example const reply: ScriptedReply = { reasoning: 'The user greets me.', text: 'Hello!', usage: { prompt_tokens: 12, completion_tokens: 3 } };
 *
 * @inline
 */
export interface ScriptedReply {
  text?: string;
  /** The model's reasoning, sent before the text in `reasoningField`. */
  reasoning?: string;
  /** Where the reasoning goes: `reasoning_content` (DeepSeek, vLLM; the default) or `reasoning` (OpenRouter, Ollama). */
  reasoningField?: 'reasoning_content' | 'reasoning';
  toolCalls?: ScriptedToolCall[];
  /** `tool_calls` when there are tool calls, else `stop`, unless given. */
  finishReason?: string;
  /**
   * The usage reported; estimated from the request's and the reply's length (4 characters a token)
   * when not given. `cached_tokens` goes to `prompt_tokens_details` (0 unless given).
   */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
}

const CREATED = 1_750_000_000;

interface WireCall {
  id: string;
  name: string;
  arguments: string;
}

function wireCalls(reply: ScriptedReply, number: number): WireCall[] {
  return (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${number}_${index}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
}

function usageOf(reply: ScriptedReply, request: any) {
  const prompt = reply.usage?.prompt_tokens ?? Math.ceil(JSON.stringify(request?.messages ?? []).length / 4);
  const completionTokens = reply.usage?.completion_tokens ?? Math.ceil(((reply.text ?? '') + JSON.stringify(reply.toolCalls ?? [])).length / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
    prompt_tokens_details: { cached_tokens: reply.usage?.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

const finishOf = (reply: ScriptedReply) => reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');

/** The `chat.completion` object of the `number`th response. */
export function completionOf(reply: ScriptedReply, number: number, request: any): object {
  const message: Record<string, unknown> = { role: 'assistant', content: reply.text ?? null, refusal: null, annotations: [] };
  if (reply.reasoning !== undefined) message[reply.reasoningField ?? 'reasoning_content'] = reply.reasoning;
  const calls = wireCalls(reply, number);
  if (calls.length > 0) message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return {
    id: `chatcmpl-${number}`,
    object: 'chat.completion',
    created: CREATED,
    model: request?.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(reply) }],
    usage: usageOf(reply, request),
    service_tier: 'default',
    system_fingerprint: 'fp_loopback',
  };
}

/** The SSE events of the `number`th response streamed, as OpenAI sends them (ending with `[DONE]`). */
export function streamEventsOf(reply: ScriptedReply, number: number, request: any, argumentsPiece = 7): string[] {
  const id = `chatcmpl-${number}`;
  const withUsage = request?.stream_options?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id, object: 'chat.completion.chunk', created: CREATED, model: request?.model, service_tier: 'default', system_fingerprint: 'fp_loopback',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(withUsage ? { usage: null } : {}),
  });
  const events: unknown[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  // Reasoning first, a few characters at a time, with `content: null` as DeepSeek sends it.
  const thoughts = [...(reply.reasoning ?? '')];
  for (let i = 0; i < thoughts.length; i += 5) events.push(chunk({ content: null, [reply.reasoningField ?? 'reasoning_content']: thoughts.slice(i, i + 5).join('') }));
  // Text arrives a few characters at a time (by code point, as a tokenizer would emit it).
  const chars = [...(reply.text ?? '')];
  for (let i = 0; i < chars.length; i += 4) events.push(chunk({ content: chars.slice(i, i + 4).join('') }));
  wireCalls(reply, number).forEach((call, index) => {
    events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (let i = 0; i < call.arguments.length; i += argumentsPiece) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(i, i + argumentsPiece) } }] }));
    }
  });
  events.push(chunk({}, finishOf(reply)));
  if (withUsage) {
    events.push({ ...chunk({}), choices: [], usage: usageOf(reply, request) });
  }
  return [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n'];
}

/** An error body in OpenAI's shape. */
export function errorBody(message: string, type = 'server_error'): object {
  return { error: { message, type, param: null, code: null } };
}

/** Cut `bytes` through the middle (in bytes) of the first occurrence of each string. */
export function cutInside(bytes: Buffer, inside: string[]): Buffer[] {
  const offsets = inside.map((s) => {
    const needle = Buffer.from(s, 'utf8');
    const at = bytes.indexOf(needle);
    if (at === -1 || needle.length < 2) throw new Error(`openaiCompatibleServer: cannot cut inside ${JSON.stringify(s)}: it is not in the stream, or shorter than 2 bytes; give splitInside a string of the reply of 2 bytes or more`);
    return at + Math.floor(needle.length / 2);
  }).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const offset of offsets) {
    pieces.push(bytes.subarray(from, offset));
    from = offset;
  }
  pieces.push(bytes.subarray(from));
  return pieces.filter((p) => p.length > 0);
}
