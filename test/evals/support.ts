// What the report's tests evaluate: an evaluation with a right, a wrong and a failed example.
import { createAgent } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { evaluate, exact, type EvalReport } from '../../src/evals.js';

/** Three examples: one right, one wrong, one whose run fails; ids with XML's special characters and a control character. */
export async function mixed(): Promise<EvalReport> {
  const replies: Record<string, string | { error: string }> = { ok: 'Sunny.', 'a<b>&"c\'': 'Rainy & <cold>.', down: { error: 'the model is down' } };
  return evaluate({
    name: 'weather',
    agent: (example) => createAgent({ model: mockModel([replies[example.id]]) }),
    dataset: [{ id: 'ok', input: 'Paris?', expected: 'Sunny.' }, { id: 'a<b>&"c\'', input: 'Oslo?', expected: 'Sunny.' }, { id: 'down', input: 'Rome?', expected: 'Sunny.' }],
    scorers: { answer: exact(), short: (run) => run.text.length < 20 },
    thresholds: { answer: 0.9 },
  });
}
