import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult, type ModelProvider } from '../src/index.js';
const input = z.object({ a: z.number(), b: z.number() });
function scripted(steps: number): ModelProvider {
  let n = 0;
  return { async generate(): Promise<GenerateResult> { n++;
      if (n > steps) return { message: { role: 'assistant', content: 'done' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
      return { message: { role: 'assistant', content: '', toolCalls: [{ id: `c${n}`, name: 'add', args: { a: n, b: 1 } }] }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'tool_calls' }; } };
}
const L = Number(process.argv[2] ?? 0);
const tool = defineTool({ name: 'add', description: 'Add', input, execute: (a) => a.a + a.b });
let best = Infinity;
for (let r = 0; r < 400; r++) {
  const agent = createAgent({ model: scripted(200), maxSteps: 300, tools: [tool] });
  for (let i = 0; i < L; i++) agent.use({ name: `n${i}`, model: (_c, next) => next(), tool: (_c, next) => next() });
  const t = performance.now();
  await agent.run('go');
  best = Math.min(best, (performance.now() - t) * 1000 / 200);
}
console.log('best', best.toFixed(2), 'us/step');
