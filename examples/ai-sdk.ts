// npx tsx examples/ai-sdk.ts
// An agent on an AI SDK language model (here @ai-sdk/openai's chat model; @ai-sdk/anthropic,
// @ai-sdk/google … plug in the same way) through koagent's `aiSdk` adapter. With OPENAI_API_KEY
// set it talks to OpenAI; without a key, the AI SDK provider is pointed at a scripted Chat
// Completions server on 127.0.0.1: real HTTP through the AI SDK's own code, no network needed.
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { createAgent, defineTool } from 'koagent';
import { retryMiddleware } from 'koagent/middleware';
import { aiSdk } from 'koagent/ai-sdk';
import { openaiCompatibleServer, type OpenAICompatibleServer } from 'koagent/testing';

const convert = defineTool({
  name: 'convert_currency',
  description: 'Convert an amount between currencies',
  input: z.object({ amount: z.number(), from: z.string(), to: z.string() }),
  execute: ({ amount, from, to }) => ({ amount: Math.round(amount * (from === 'EUR' && to === 'USD' ? 1.08 : 1) * 100) / 100, currency: to }),
});

let server: OpenAICompatibleServer | undefined;
let provider;
if (process.env.OPENAI_API_KEY) {
  provider = createOpenAI();
  console.log('model: @ai-sdk/openai chat model gpt-5-mini (a real model, over the network)');
} else {
  server = await openaiCompatibleServer({ responses: [
    { reply: { toolCalls: [{ id: 'call_1', name: 'convert_currency', arguments: '{"amount":50,"from":"EUR","to":"USD"}' }] } },
    { reply: { text: '50 EUR is about 54 USD.' } },
  ] });
  provider = createOpenAI({ baseURL: server.baseURL, apiKey: 'sk-loopback' });
  console.log(`No OPENAI_API_KEY: the AI SDK provider talks to a scripted Chat Completions server at ${server.baseURL} (real HTTP on loopback, no network).`);
}

try {
  const agent = createAgent({
    instructions: 'You convert currencies with the tool.',
    model: aiSdk(provider.chat('gpt-5-mini')),
    tools: [convert],
    middleware: [retryMiddleware()],
  });
  const result = await agent.run('How much is 50 EUR in USD?');
  const calls = result.messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls ?? [] : []));
  console.log(`tool calls: ${calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ') || 'none'}`);
  console.log(`answer: ${result.text}`);
  console.log(`usage: ${result.usage.inputTokens} in, ${result.usage.outputTokens} out, ${result.usage.modelCalls} model calls`);
} finally {
  await server?.close();
}
