// A criogen Hook that answers repeated tool calls from a cache: afterTool remembers each
// forecast, and beforeTool returns a ToolResult for a city it has seen, so the tool is skipped.
// Run offline: npx tsx examples/hooks/cached-weather.ts
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool } from 'koagent';
import { ToolResult, type Hook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

export async function cachedWeather() {
  const lookups: string[] = [];
  const forecast = defineTool({
    name: 'forecast',
    description: 'Tomorrow\'s forecast for a city',
    input: z.object({ city: z.string() }),
    execute: ({ city }) => {
      lookups.push(city);
      return { city, sky: city === 'Lisbon' ? 'clear' : 'showers' };
    },
  });

  const remembered = new Map<string, unknown>();
  const keyOf = (name: string, args: Record<string, unknown>) => `${name}/${String(args.city).toLowerCase()}`;
  const forecastCache: Hook = {
    name: 'forecast-cache',
    beforeTool(call) {
      const known = remembered.get(keyOf(call.name, call.args));
      // A ToolResult settles the call here: the tool does not run, the model reads this value.
      if (known !== undefined) return new ToolResult(known);
    },
    afterTool(call, result) {
      remembered.set(keyOf(call.name, call.args), result);
      // Returning nothing keeps the result as it is.
    },
  };

  const model = mockModel([
    { toolCalls: [{ name: 'forecast', args: { city: 'Lisbon' } }] },
    { toolCalls: [{ name: 'forecast', args: { city: 'lisbon' } }, { name: 'forecast', args: { city: 'Bergen' } }] },
    'Lisbon: clear. Bergen: showers.',
  ]);
  const agent = createAgent({ name: 'weather', model, tools: [forecast], hooks: [forecastCache], toolConcurrency: 1 });
  const result = await agent.run('Tomorrow in Lisbon, then Lisbon and Bergen again?');
  const toolMessages = result.messages.filter((m) => m.role === 'tool');
  return { answer: result.text, lookups, servedFromCache: toolMessages.filter((m) => m.metadata?.replacedBy === 'forecast-cache').length };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { answer, lookups, servedFromCache } = await cachedWeather();
  console.log(`the tool ran for: ${lookups.join(', ')}`);
  console.log(`calls answered from the cache: ${servedFromCache}`);
  console.log(`answer: ${answer}`);
}
