// Shared by the provider tests: a loopback Chat Completions server per test, closed after it.
import { afterEach } from 'vitest';
import type { StreamPart } from '../../src/types.js';
import { openaiCompatibleServer, type OpenAICompatibleServer, type ScriptedResponse } from '../../src/testing/index.js';

/** Call at the top of a test file; the function it returns starts this test's server. */
export function chatServerPerTest(): (...steps: ScriptedResponse[]) => Promise<OpenAICompatibleServer> {
  let server: OpenAICompatibleServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return async (...steps) => (server = await openaiCompatibleServer({ responses: steps }));
}

/** Every part of a provider's stream, in order. */
export async function collectParts(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}
