// Small helpers shared by the core runtime's tests. Tools and providers here are real (they go
// through defineTool and the ModelProvider contract); nothing in the runtime is mocked.
import { z } from 'zod';
import { defineTool, KoagentError, RunFailedError, type GenerateOptions, type GenerateResult, type Message, type ModelProvider } from '../../src/index.js';
import type { ToolMessage } from '../../src/types.js';

/** `add({ a, b })` → a + b. */
export const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

/** Resolve to the error a promise rejects with; fail the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<RunFailedError> {
  try {
    await promise;
  } catch (error) {
    return error as RunFailedError;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** Like `rejection`, and checks that what came back is a RunFailedError with that code. */
export async function runFailure(promise: Promise<unknown>, code: string): Promise<RunFailedError> {
  const error = await rejection(promise);
  if (!(error instanceof RunFailedError) || !KoagentError.is(error)) throw new Error(`expected a RunFailedError, got ${String(error)}`, { cause: error });
  if (error.code !== code) throw new Error(`expected code ${code}, got ${error.code}: ${error.message}`, { cause: error });
  return error;
}

export function toolMessages(messages: readonly Message[]): ToolMessage[] {
  return messages.filter((m): m is ToolMessage => m.role === 'tool');
}

/** What the model reads back for one tool call, parsed from its `content`. */
export function toolError(message: ToolMessage | undefined): { kind: string; message: string } | undefined {
  return message?.metadata?.error as { kind: string; message: string } | undefined;
}

export function reply(content: string, toolCalls?: { id: string; name: string; args: unknown }[]): GenerateResult {
  return {
    message: toolCalls === undefined ? { role: 'assistant', content } : { role: 'assistant', content, toolCalls },
    usage: { inputTokens: 1, outputTokens: 1 },
    finishReason: toolCalls === undefined ? 'stop' : 'tool_calls',
  };
}

/** A provider built from a function, recording every request it receives (by reference). */
export function provider(answer: (request: GenerateOptions, call: number) => GenerateResult | Promise<GenerateResult>): ModelProvider & { requests: GenerateOptions[] } {
  const requests: GenerateOptions[] = [];
  return {
    name: 'test-provider',
    requests,
    async generate(request) {
      requests.push(request);
      return answer(request, requests.length);
    },
  };
}

/**
 * `model`, its stream held after its first `deltas` text deltas until the call is aborted (then it
 * throws the abort's reason, as a provider's stream does): a reply still coming when the test acts
 * on it, however fast the machine, with no pause between deltas to rely on.
 *
 * @example const stream = createAgent({ model: heldStream(mockModel(['a b c'])) }).stream('Go'); // breaks after 'a ' find the rest still to come
 */
export function heldStream(model: ModelProvider, deltas = 1): ModelProvider {
  return {
    ...model,
    async *stream(request) {
      let seen = 0;
      for await (const part of model.stream!(request)) {
        yield part;
        if (part.type !== 'text' || ++seen !== deltas) continue;
        const signal = request.signal;
        if (signal === undefined) throw new Error('heldStream: the request has no signal, so nothing could end the hold');
        await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
        signal.throwIfAborted();
      }
    },
  };
}

/** A promise with its resolve function outside, to let a test decide when something finishes. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
