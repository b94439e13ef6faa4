// A scorer graded by a model you give, here a mockModel playing the grader: what it is shown of
// the run, how its JSON reply becomes a score and a pass, and a reply that is not the JSON asked
// for, which is the scorer's error, quoted.
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { evaluate, modelGraded } from '../../src/evals.js';
import type { EvalRun } from '../../src/evals/scorers.js';
import { effectsOf, toolCallsOf } from '../../src/evals/run-facts.js';

async function ran(text: string, expected?: unknown): Promise<EvalRun> {
  const result = await createAgent({ model: mockModel([text]) }).run('What should I wear in Oslo?');
  return { example: { id: 'oslo', input: 'What should I wear in Oslo?', ...(expected === undefined ? {} : { expected }) }, runId: result.runId, status: result.status, text: result.text, output: result.output, state: result.state, toolCalls: toolCallsOf(result.state), effects: effectsOf(result.state) };
}

describe('modelGraded', () => {
  it("shows the grader the criteria, the input, what was expected, the tools called and the answer, asking for JSON", async () => {
    const grader = mockModel(['{"score": 0.9, "reason": "Says to take a coat."}']);
    const score = await modelGraded({ model: grader, criteria: 'Advises a coat when it is cold.' })(await ran('Take a coat.', 'A coat'));
    expect(score).toEqual({ score: 0.9, pass: true, reason: 'Says to take a coat.' });
    const [call] = grader.calls;
    expect(call.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('{"score": <a number from 0 to 1>, "reason": "<one sentence>"}') });
    expect(call.messages[1].content).toBe('Criteria: Advises a coat when it is cold.\n\nInput: What should I wear in Oslo?\nExpected: A coat\nTools called: none\n\nAnswer:\nTake a coat.');
    expect(call.request.responseFormat).toMatchObject({ type: 'json', name: 'grade' });
  });

  it('passes an example at passAt (default 0.5), and reads a reply fenced as code', async () => {
    const fenced = '```json\n{"score": 0.6, "reason": "Partly."}\n```';
    expect(await modelGraded({ model: mockModel([fenced]), criteria: 'x' })(await ran('Hm.'))).toEqual({ score: 0.6, pass: true, reason: 'Partly.' });
    expect(await modelGraded({ model: mockModel([fenced]), criteria: 'x', passAt: 0.7 })(await ran('Hm.'))).toEqual({ score: 0.6, pass: false, reason: 'Partly.' });
  });

  it('throws, quoting the reply, when the grader does not answer with the JSON asked for (a score out of range included)', async () => {
    await expect(modelGraded({ model: mockModel(['Looks fine to me.']), criteria: 'x' })(await ran('Hm.'))).rejects.toThrow('the grader\'s reply is not {"score": <0 to 1>, "reason": "…"}: "Looks fine to me."');
    await expect(modelGraded({ model: mockModel(['{"score": 7}']), criteria: 'x' })(await ran('Hm.'))).rejects.toThrow('the grader\'s reply is not');
  });

  it('in an evaluation, grades each run, and counts a grader that answers badly as that example\'s error, not a crash', async () => {
    const grader = mockModel(['{"score": 1, "reason": "Right."}', 'I cannot grade this.']);
    const report = await evaluate({
      agent: createAgent({ model: mockModel(['Take a coat.', 'Take a coat.']) }),
      dataset: [{ id: 'a', input: 'Oslo?' }, { id: 'b', input: 'Bergen?' }],
      scorers: { judge: modelGraded({ model: grader, criteria: 'Advises a coat.' }) },
      concurrency: 1,
    });
    expect(report.examples.map((e) => e.scores.judge)).toEqual([
      { score: 1, pass: true, reason: 'Right.' },
      { score: 0, pass: false, error: true, reason: 'the scorer threw: the grader\'s reply is not {"score": <0 to 1>, "reason": "…"}: "I cannot grade this."' },
    ]);
    expect(report.scorers.judge.mean).toBe(0.5);
  });

  it('refuses a grader that is not a model, and misspelt options, naming the fix', () => {
    expect(() => modelGraded({ model: 'gpt-5-mini' as never, criteria: 'x' })).toThrow("modelGraded: model must be a model provider, e.g. openai({ model: 'gpt-5-mini' }) or mockModel([...])");
    expect(() => modelGraded({ model: mockModel([]), rubric: 'x' } as never)).toThrow('modelGraded: rubric is not an option of modelGraded; did you mean `criteria`?');
  });
});
