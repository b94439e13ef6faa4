/** A tool call as the model wrote it. `args` is an object, or the raw JSON text a provider got. */
export interface ToolCallPart {
  id: string;
  name: string;
  args: unknown;
}

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string;
  toolCalls?: ToolCallPart[];
}

/** The result of one tool call, as the model sees it: `content` is text (JSON for non-strings). */
export interface ToolMessage {
  role: 'tool';
  toolCallId: string;
  name: string;
  content: string;
  metadata?: Record<string, unknown>;
}

/**
 * One transcript entry. Plain JSON, so a transcript can be stored and resumed anywhere.
 *
 * @example const m: Message = { role: 'user', content: 'Hello' };
 */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** What `run`, `send` and `stream` accept: a user's text, or messages to append. */
export type RunInput = string | Message | Message[];

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** Turn run input into messages, naming exactly what is wrong with bad input. */
export function inputMessages(input: RunInput): Message[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const list = Array.isArray(input) ? input : [input];
  list.forEach((m, i) => {
    const where = Array.isArray(input) ? `input[${i}]` : 'input';
    if (typeof m !== 'object' || m === null || !ROLES.has((m as Message).role)) {
      throw new TypeError(`${where} is not a message: expected { role: 'user' | 'system' | 'assistant' | 'tool', content: string }`);
    }
    if (typeof m.content !== 'string') throw new TypeError(`${where}.content must be a string`);
  });
  return list;
}

/** The text of the last assistant message, scanning back from the end (once per run). */
export function lastAssistantText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'assistant') return m.content;
  }
  return '';
}
