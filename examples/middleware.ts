// Every built-in middleware of koagent/middleware on one agent, in the order
// docs/built-in-middleware.md recommends, and a line for each thing one of them did, printed from
// its own callbacks and events. Offline: the models are scripted (mockModel).
// Run: npx tsx examples/middleware.ts
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, ProviderError, type ModelProvider } from 'koagent';
import { contextEditingMiddleware, costBudgetMiddleware, guardrailsMiddleware, loopDetectionMiddleware, modelFallbackMiddleware, piiRedactionMiddleware, promptCachingMiddleware, rateLimitMiddleware, responseCacheMiddleware, todoListMiddleware, toolCacheMiddleware, toolCallLimitMiddleware, toolEmulatorMiddleware, toolSelectorMiddleware, type Todo } from 'koagent/middleware';
import { mockModel } from 'koagent/testing';

const overloaded = new ProviderError({ provider: 'acme', modelId: 'primary-model', kind: 'http', status: 503, providerMessage: 'overloaded', retryable: true });
const plan: Todo[] = [{ content: 'Check the weather', status: 'in_progress' }, { content: 'Find a hotel', status: 'pending' }, { content: 'Send the plan', status: 'pending' }];
const check = { name: 'check_availability', args: { hotel: 'Grand' } };
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const LABELS: Record<string, [string, string]> = { email: ['e-mail address', 'e-mail addresses'], phone: ['phone number', 'phone numbers'], creditCard: ['card number', 'card numbers'] };
const TARGETS: Record<string, string> = { input: 'user input', output: "model's reply", toolArgs: "tool call's arguments", toolResults: 'tool result' };

export async function main(say: (line: string) => void = console.log) {
  const primary = Object.assign(mockModel([
    'I plan trips: the weather, hotels, and the plan by e-mail.',
    { toolCalls: [{ name: 'write_todos', args: { todos: plan } }, { name: 'get_weather', args: { city: 'Oslo' } }] },
    { error: overloaded },
    { toolCalls: [{ name: 'search_hotels', args: { city: 'Oslo' } }, { name: 'search_hotels', args: { city: 'Bergen' } }] },
    { toolCalls: [check] },
    { toolCalls: [check] },
    { toolCalls: [check] },
    { toolCalls: [{ name: 'write_todos', args: { todos: plan.map((todo) => ({ ...todo, status: 'completed' })) } }, { name: 'send_email', args: { to: 'ana@example.com', body: 'The Grand, Friday to Sunday.' } }] },
    'The Grand in Oslo it is; the plan went to ana@example.com.',
  ]), { modelId: 'primary-model' });
  const backup = Object.assign(mockModel([{ toolCalls: [{ name: 'get_weather', args: { city: 'Oslo' } }, { name: 'find_contacts', args: { city: 'Oslo' } }] }]), { modelId: 'backup-model' });
  // The tool selector's own (small) model: the same six tools for every user turn.
  const selector: ModelProvider = {
    name: 'selector',
    generate: async () => ({ message: { role: 'assistant', content: '{"tools": ["get_weather", "find_contacts", "search_hotels", "check_availability", "send_email", "book_hotel"]}' }, usage: { inputTokens: 60, outputTokens: 20 }, finishReason: 'stop' }),
  };

  const city = z.object({ city: z.string() });
  const forecast = 'Friday: light rain, 9°C, wind from the west. Saturday: clearing, 12°C, a sunny afternoon. Sunday: dry and mild, 14°C.';
  const tools = [
    defineTool({ name: 'get_weather', description: 'The forecast for a city', input: city, execute: ({ city }) => { say(`  (get_weather runs for ${city})`); return { city, forecast }; } }),
    defineTool({ name: 'find_contacts', description: 'Local contacts', input: city, execute: () => ({ contacts: ['Tourist office: info@visitoslo.example', 'Concierge: desk@grand-oslo.example'] }) }),
    defineTool({ name: 'search_hotels', description: 'Hotels in a city', input: city, execute: ({ city }) => [`${city}: Grand`, `${city}: Harbour`] }),
    defineTool({ name: 'check_availability', description: 'Whether a hotel has rooms', input: z.object({ hotel: z.string() }), execute: () => 'no answer from the hotel yet' }),
    defineTool({ name: 'book_hotel', description: 'Book a hotel', input: z.object({ hotel: z.string() }), needsApproval: true, execute: ({ hotel }) => ({ booked: hotel }) }),
    defineTool({ name: 'send_email', description: 'Send an e-mail', input: z.object({ to: z.string(), body: z.string() }), execute: () => { throw new Error('no mail server in an example'); } }),
    defineTool({ name: 'convert_currency', description: 'Convert money', input: z.object({ amount: z.number() }), execute: ({ amount }) => amount }),
    defineTool({ name: 'translate', description: 'Translate a text', input: z.object({ text: z.string() }), execute: ({ text }) => text }),
  ];

  const spent: Record<string, number> = {};
  // The rate limit's clock is simulated, so that its waits take no time here.
  const clock = { now: 0 };
  const agent = createAgent({
    name: 'trip-planner',
    instructions: 'You plan trips.',
    model: primary,
    tools,
    middleware: [
      costBudgetMiddleware({ prices: { 'primary-model': { input: 3, output: 15 }, 'backup-model': { input: 1, output: 5 } }, runBudget: 1, onCost: ({ model, usd }) => { spent[model] = (spent[model] ?? 0) + usd; } }),
      guardrailsMiddleware({
        input: [{ name: 'no-injection', check: ({ text }) => { say(`[guardrails] input checked (no-injection): "${text}"`); return /ignore previous/i.test(text) ? { block: 'Prompt injection' } : undefined; } }],
        output: [{ name: 'no-card-numbers', check: ({ text }) => { say(`[guardrails] final answer checked (no-card-numbers): "${text}"`); return /\d{4} \d{4} \d{4} \d{4}/.test(text) ? { block: 'A card number' } : undefined; } }],
      }),
      toolSelectorMiddleware({ model: selector }),
      contextEditingMiddleware({ triggerTokens: 300, keep: 2 }),
      todoListMiddleware(),
      loopDetectionMiddleware(),
      toolCallLimitMiddleware({ perRun: { byTool: { search_hotels: 1 } } }),
      toolCacheMiddleware({ tools: ['get_weather'], onHit: ({ toolName }) => say(`[tool-cache] ${toolName} answered from the cache: the tool did not run`) }),
      responseCacheMiddleware({ onHit: ({ usage }) => say(`[response-cache] the same request was answered before: no model call, ${usage.inputTokens + usage.outputTokens} tokens saved`) }),
      piiRedactionMiddleware({ onRedact: ({ target, found }) => say(`[pii-redaction] ${Object.entries(found).map(([kind, n]) => plural(n, ...(LABELS[kind] ?? [kind]))).join(', ')} masked in the ${TARGETS[target]}`) }),
      toolEmulatorMiddleware({ tools: ['send_email'], emulate: ({ to }: { to: string }) => { say(`[tool-emulator] send_email emulated (to ${to}): nothing was sent`); return { sent: true }; } }),
      promptCachingMiddleware(),
      modelFallbackMiddleware({ models: [backup], onFallback: ({ from, to, error }) => say(`[model-fallback] ${from} failed with ${(error as ProviderError).status}, ${to} answered`) }),
      rateLimitMiddleware({ requestsPerMinute: 4, now: () => clock.now, sleep: async (ms) => { clock.now += ms; }, onWait: ({ key, waitMs }) => say(`[rate-limit] ${key} is at 4 requests a minute: waited ${Math.round(waitMs / 1000)} s (simulated)`) }),
    ],
    onEvent(e) {
      const event = e as unknown as Record<string, any>;
      if (event.type === 'tool-selector.selected') say(`[tool-selector] kept ${event.tools.length} of ${event.offered} tools for this turn: ${event.tools.join(', ')}`);
      if (event.type === 'context_editing.cleared') say(`[context-editing] cleared ${plural(event.results, 'old tool result')}: ${event.tokensBefore} → ${event.tokensAfter} tokens`);
      if (event.type === 'todo-list.updated') say(`[todo-list] the plan: ${event.todos.map((t: Todo) => `${t.content} (${t.status})`).join(', ')}`);
      if (event.type === 'loop_detection.detected') say(`[loop-detection] ${event.tool} called ${event.times} times with the same arguments: not run, the model is told to change course`);
      if (event.type === 'tool_call_limit.reached') say(`[tool-call-limit] ${event.tool} may run ${event.max === 1 ? 'once' : `${event.max} times`} a run: this call was refused`);
    },
  });

  say('--- run 1: a greeting');
  await agent.run('What can you do?');
  say('--- run 2: the trip');
  for (const model of Object.keys(spent)) delete spent[model];
  const trip = await agent.run('Plan a weekend in Oslo for me (ana@example.com) and send me the plan.');
  const last = primary.calls.at(-1)!.messages;
  const marked = last.filter((m) => m.providerOptions?.anthropic !== undefined).length;
  say(`[prompt-caching] the last request had ${marked} of its ${last.length} messages marked for the provider's prompt cache (instructions, history, latest)`);
  say(`[cost-budget] the run cost $${trip.usage.cost?.toFixed(5)}: ${Object.entries(spent).map(([model, usd]) => `${model} $${usd.toFixed(5)}`).join(', ')} (budget $1.00)`);
  say(`answer: ${trip.text}`);
  say('--- run 3: the greeting again');
  const again = await agent.run('What can you do?');
  say(`answer: ${again.text} (this run made ${plural(again.usage.modelCalls, 'model call')}: the tool selector's)`);
  return { trip, again };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
