// npx tsx examples/structured-output.ts
// A typed final answer: the agent's output is a zod schema, so result.output is a typed object.
// The scripted model first answers in prose, is sent back the validation error, and then
// answers with JSON that fits. The tool reads a typed run context (a "database" and the user),
// which the run is given and the run state never holds.
import { z } from 'zod';
import { createAgent, defineTool, type ToolContext } from 'koagent';
import { mockModel } from 'koagent/testing';

interface AppContext {
  userId: string;
  forecasts: Map<string, { celsius: number; sky: string }>;
}

const Forecast = z.object({
  city: z.string(),
  celsius: z.number(),
  advice: z.enum(['coat', 'umbrella', 't-shirt']),
});

const forecast = defineTool({
  name: 'forecast',
  description: 'The forecast for a city',
  input: z.object({ city: z.string() }),
  execute: ({ city }, ctx: ToolContext<AppContext>) => {
    console.log(`  forecast(${city}) for user ${ctx.context.userId}`);
    return ctx.context.forecasts.get(city) ?? { celsius: 15, sky: 'unknown' };
  },
});

const model = mockModel([
  { toolCalls: [{ name: 'forecast', args: { city: 'Oslo' } }] },
  'Oslo is at 3 degrees with rain, so take a coat.',
  '{"city": "Oslo", "celsius": 3, "advice": "umbrella"}',
]);

const agent = createAgent({
  instructions: 'You give weather advice.',
  model,
  tools: [forecast],
  contextSchema: z.object({ userId: z.string(), forecasts: z.custom<AppContext['forecasts']>((v) => v instanceof Map) }),
  output: { schema: Forecast, repairs: 2 },
  onEvent: (event) => {
    if (event.type === 'output') console.log('  event output:', JSON.stringify(event.output));
  },
});

const result = await agent.run('Should I take a coat in Oslo?', {
  context: { userId: 'ada', forecasts: new Map([['Oslo', { celsius: 3, sky: 'rain' }]]) },
});

const repairs = result.messages.filter((m) => m.role === 'user').slice(1);
console.log(`repair turns: ${repairs.length}`);
console.log(`  the model was told: ${String(repairs[0]?.content).split('\n')[0]}`);
// result.output is typed { city: string; celsius: number; advice: 'coat' | 'umbrella' | 't-shirt' }
const { city, celsius, advice } = result.output;
console.log(`output: ${city}, ${celsius}°C, advice: ${advice}`);
console.log(`model calls: ${result.usage.modelCalls}; asked for JSON: ${model.calls.every((c) => c.request.responseFormat?.type === 'json')}`);
// Looked for by its key: the user id alone, three letters of hex, may turn up inside a run id.
console.log(`the state holds the context: ${JSON.stringify(result.state).includes('"userId"')}`);
