// npx tsx examples/openai.ts
// An agent on an OpenAI-compatible model over HTTP, with a tool, the retry middleware, and a
// streamed reply. With OPENAI_API_KEY set it talks to OpenAI (KOAGENT_MODEL picks another model
// string, e.g. ollama:llama3.2); without a key it starts a scripted Chat Completions server on
// 127.0.0.1 and talks to that: the same HTTP and SSE code path, no network needed.
import { z } from 'zod';
import { createAgent, defineTool, openai, resolveModel, type ModelProvider } from 'koagent';
import { retryMiddleware } from 'koagent/middleware';
import { openaiCompatibleServer, type OpenAICompatibleServer } from 'koagent/testing';

const weather = defineTool({
  name: 'get_weather',
  description: 'The forecast for a city',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, forecast: city === 'Paris' ? 'sunny, 24°C' : 'rain, 12°C' }),
});

let server: OpenAICompatibleServer | undefined;
let model: ModelProvider;
if (process.env.OPENAI_API_KEY || process.env.KOAGENT_MODEL) {
  const spec = process.env.KOAGENT_MODEL ?? 'openai:gpt-5-mini';
  model = resolveModel(spec);
  console.log(`model: ${spec} (a real model, over the network)`);
} else {
  server = await openaiCompatibleServer({ responses: [
    { reply: { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] } },
    { reply: { text: 'Paris is sunny today, 24°C.' } },
    { reply: { text: 'Sunny skies over the Seine — café weather, ça va!' }, splitInside: ['é', '—'] },
  ] });
  model = openai({ model: 'gpt-5-mini', baseURL: server.baseURL, apiKey: 'sk-loopback' });
  console.log(`No OPENAI_API_KEY: talking to a scripted Chat Completions server at ${server.baseURL} (real HTTP on loopback, no network).`);
}

try {
  const agent = createAgent({
    instructions: 'You report the weather. Use the tool.',
    model,
    tools: [weather],
    middleware: [retryMiddleware({ maxRetries: 3, onRetry: ({ attempt, delayMs }) => console.log(`  retry ${attempt} in ${delayMs} ms`) })],
  });
  const result = await agent.run('What is the weather in Paris?');
  const calls = result.messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls ?? [] : []));
  console.log(`tool calls: ${calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ') || 'none'}`);
  console.log(`answer: ${result.text}`);
  console.log(`usage: ${result.usage.inputTokens} in, ${result.usage.outputTokens} out, ${result.usage.modelCalls} model calls`);

  if (model.stream !== undefined) {
    process.stdout.write('streamed: ');
    for await (const part of model.stream({ messages: [{ role: 'user', content: 'Describe Paris weather in one sentence.' }], tools: [] })) {
      if (part.type === 'text') process.stdout.write(part.delta);
      if (part.type === 'finish') process.stdout.write(`\n(finish: ${part.finishReason}, ${part.usage.outputTokens} output tokens)\n`);
    }
  }
} finally {
  await server?.close();
}
