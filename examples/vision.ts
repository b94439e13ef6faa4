// npx tsx examples/vision.ts
// Images both ways: a user message with an image, and a tool that returns one (a chart it
// rendered). First through the OpenAI-compatible provider against a scripted Chat Completions
// server on 127.0.0.1, which records each request so the example can check the wire body;
// then through mockModel, which shows the same transcript offline.
import { z } from 'zod';
import { createAgent, defineTool, openai, type Message, type ModelProvider } from 'koagent';
import { mockModel } from 'koagent/testing';
import { openaiCompatibleServer } from 'koagent/testing';

// Two 1×1 PNGs, base64: a "photo" the user sends and a "chart" the tool renders.
const photo = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const chart = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const renderChart = defineTool({
  name: 'render_chart',
  description: 'Renders a bar chart of the numbers and returns it as an image',
  input: z.object({ values: z.array(z.number()) }),
  execute: ({ values }) => ({ values, png: chart }),
  // Layers and hooks see { values, png }; the model sees a caption and the image itself.
  toModelOutput: ({ values }) => [{ type: 'text', text: `Bar chart of ${values.join(', ')}` }, { type: 'image', image: chart, mediaType: 'image/png' }],
});

const question: Message = {
  role: 'user',
  content: [{ type: 'text', text: 'Count the bars in this photo and chart them.' }, { type: 'image', image: photo, mediaType: 'image/png' }],
};

function agentOn(model: ModelProvider) {
  return createAgent({ instructions: 'You read images and draw charts.', model, tools: [renderChart] });
}

function describeTranscript(messages: Message[]): string[] {
  return messages.map((m) => {
    const content = typeof m.content === 'string' ? JSON.stringify(m.content) : m.content.map((p) => (p.type === 'text' ? `text "${p.text}"` : p.type === 'image' ? `image (${p.mediaType ?? 'unknown type'})` : p.type)).join(' + ');
    return `  ${m.role}: ${content}${m.role === 'assistant' && m.toolCalls?.length ? ` [calls ${m.toolCalls.map((c) => c.name).join(', ')}]` : ''}`;
  });
}

// 1. Over HTTP, checking what went on the wire.
const server = await openaiCompatibleServer({ responses: [
  { reply: { toolCalls: [{ id: 'call_1', name: 'render_chart', arguments: '{"values":[3,5,2]}' }] } },
  { reply: { text: 'The photo shows three bars; the chart plots 3, 5 and 2.' } },
] });
try {
  const result = await agentOn(openai({ model: 'gpt-5-mini', baseURL: server.baseURL, apiKey: 'sk-loopback' })).run(question);
  console.log(`OpenAI-compatible provider (a scripted server at ${server.baseURL}):`);
  console.log(`  answer: ${result.text}`);
  const [first, second] = server.requests.map((r) => r.body);
  const userImage = first.messages[1].content.find((p: { type: string }) => p.type === 'image_url');
  check(userImage?.image_url.url === `data:image/png;base64,${photo}`, 'the user image went as an image_url data URL');
  const toolMessage = second.messages.find((m: { role: string }) => m.role === 'tool');
  check(toolMessage.content === 'Bar chart of 3, 5, 2', 'the tool result went as text in the tool message');
  const after = second.messages[second.messages.indexOf(toolMessage) + 1];
  const chartImage = after?.role === 'user' ? after.content.find((p: { type: string }) => p.type === 'image_url') : undefined;
  check(chartImage?.image_url.url === `data:image/png;base64,${chart}`, 'the chart image followed it in a user message');
} finally {
  await server.close();
}

// 2. The same agent on mockModel: the transcript keeps the parts as plain JSON.
const model = mockModel([{ toolCalls: [{ name: 'render_chart', args: { values: [3, 5, 2] } }] }, 'Three bars: 3, 5 and 2.']);
const offline = await agentOn(model).run(question);
console.log('mockModel:');
for (const line of describeTranscript(offline.messages)) console.log(line);
check(JSON.stringify(offline.state).includes(chart), 'the run state holds the chart as base64 (see mediaStoreMiddleware to keep it out)');

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`vision example: expected that ${what}`);
  console.log(`  checked: ${what}`);
}
