// npm start: one agent run with three middleware layers printing what they do. The model is
// scripted (mockModel), so no API key or network is needed — unless KOAGENT_MODEL names a real
// one (e.g. KOAGENT_MODEL=openai:gpt-5-mini with OPENAI_API_KEY set): then the same run uses it.
import { z } from 'zod';
import { createAgent, defineMiddleware, defineTool, type ModelProvider } from 'koagent';
import { piiRedactionMiddleware, toolCacheMiddleware } from 'koagent/middleware';
import { mockModel } from 'koagent/testing';

const depth = { n: 0 };
const say = (line: string) => console.log(`${'  '.repeat(depth.n)}${line}`);

const weather = defineTool({
  name: 'get_weather',
  description: 'The forecast for a city',
  input: z.object({ city: z.string() }),
  async execute({ city }) {
    say(`    the tool runs for ${city}`);
    return { city, forecast: city === 'Paris' ? 'sunny, 24°C' : 'rain, 12°C', contact: 'ops@weather.example' };
  },
});

// Outermost: sees the whole run, then each model call and tool call inside it.
const trace = defineMiddleware({
  name: 'trace',
  async run(ctx, next) {
    say(`[trace] run ${ctx.runId.slice(0, 12)}… starts`);
    depth.n++;
    const result = await next();
    depth.n--;
    say(`[trace] run ends: ${result.status} (${result.stopReason}) after ${result.usage.modelCalls} model calls`);
    return result;
  },
  async model(ctx, next) {
    say(`[trace] model call ${ctx.step} with ${ctx.messages.length} messages →`);
    const reply = await next();
    const calls = reply.message.toolCalls?.map((c) => c.name).join(', ');
    say(`[trace] ← model replied ${calls ? `with tool calls: ${calls}` : `"${reply.message.content}"`}`);
    return reply;
  },
  async tool(ctx, next) {
    say(`[trace] tool ${ctx.toolName}(${JSON.stringify(ctx.args)}) →`);
    depth.n++;
    const outcome = await next();
    depth.n--;
    say(`[trace] ← ${ctx.toolName} settled: ${outcome.error ? `error ${outcome.error.kind}` : JSON.stringify(outcome.result)}${outcome.replacedBy ? ` (from ${outcome.replacedBy})` : ''}`);
    return outcome;
  },
});

// Short-circuits: a cached city never reaches the tool (the built-in tool result cache).
const cached = toolCacheMiddleware({ tools: ['get_weather'], onHit: () => say('  [tool-cache] hit: the tool is skipped') });
await cached.prime('get_weather', { city: 'Oslo' }, { city: 'Oslo', forecast: 'snow, -3°C (cached)' });

// Innermost of the three: redacts e-mail addresses in tool results on the way out, before
// anyone else sees them (the built-in PII redaction).
const redact = piiRedactionMiddleware({
  detectors: ['email'],
  targets: ['toolResults'],
  onRedact: ({ found }) => say(`  [redact] ${found.email} e-mail address removed from the result`),
});

const realModel = process.env.KOAGENT_MODEL;
const model: ModelProvider | string = realModel || mockModel([
  { toolCalls: [{ name: 'get_weather', args: { city: 'Paris' } }, { name: 'get_weather', args: { city: 'Oslo' } }] },
  { text: 'Paris is sunny (24°C); Oslo has snow (-3°C).' },
]);
console.log(realModel ? `model: ${realModel} (from KOAGENT_MODEL)\n` : 'model: scripted mockModel (set KOAGENT_MODEL=openai:gpt-5-mini and OPENAI_API_KEY to use a real one)\n');

const agent = createAgent({ name: 'forecaster', instructions: 'You report the weather.', model, tools: [weather], toolConcurrency: 1 })
  .use(trace)
  .use(cached)
  .use(redact);

const result = await agent.send('Weather in Paris and Oslo?');
console.log(`\nanswer: ${result.text}`);
console.log(`tool messages the model saw:\n${result.messages.filter((m) => m.role === 'tool').map((m) => `  ${m.content}`).join('\n')}`);
