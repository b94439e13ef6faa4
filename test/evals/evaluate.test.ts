// evaluate(): every example run and scored, at most `concurrency` runs at once (counted), the runs
// and the report kept in the store, a stored baseline read back, a failed run or a bad scorer
// scored 0 with the reason, and options checked before anything runs.
import { describe, expect, it } from 'vitest';
import { createAgent, memoryStore, type ModelProvider } from '../../src/index.js';
import { mockModel } from '../../src/testing/index.js';
import { evaluate, exact, type EvalReport } from '../../src/evals.js';
import { reportKeys } from '../../src/evals/report.js';

/**
 * Agents made one per example, counted: an agent is made as its example's run starts, and its
 * model's one reply ends the run's work. The most runs under way at once is counted, not timed:
 * an evaluation starts its first runs together, before any of them answers.
 */
function countedAgents(): { agent: () => ReturnType<typeof createAgent>; made: () => number; most: () => number } {
  let made = 0;
  let answered = 0;
  let most = 0;
  const model: ModelProvider = {
    name: 'counted',
    async generate() {
      answered++;
      return { message: { role: 'assistant', content: 'Done.' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
    },
  };
  return {
    agent: () => {
      made++;
      most = Math.max(most, made - answered);
      return createAgent({ model });
    },
    made: () => made,
    most: () => most,
  };
}

const examples = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i + 1}`, input: `Task ${i + 1}`, expected: 'Done.' }));

describe('concurrency', () => {
  it.each([1, 3, 10])('runs at most %i examples at once, and every one of them', async (limit) => {
    const counted = countedAgents();
    const report = await evaluate({ agent: counted.agent, dataset: examples(10), scorers: { done: exact() }, concurrency: limit });
    expect(counted.made()).toBe(10);
    expect(counted.most()).toBe(limit);
    expect(report.examples.map((e) => [e.id, e.scores.done.score])).toEqual(examples(10).map((e) => [e.id, 1]));
  });

  it('runs 4 at once by default', async () => {
    const counted = countedAgents();
    await evaluate({ agent: counted.agent, dataset: examples(10), scorers: { done: exact() } });
    expect(counted.most()).toBe(4);
  });
});

describe('the runs and the report in the store', () => {
  it('stores each run (traced) and the report under the latest key, and under the passed key only when the gate passed', async () => {
    const store = memoryStore();
    const agent = () => createAgent({ model: mockModel(['Done.']) });
    const passed = await evaluate({ name: 'chores', agent, dataset: examples(2), scorers: { done: exact() }, thresholds: { done: 1 }, store });
    for (const example of passed.examples) {
      const state = await store.loadRun(example.runId!);
      expect(state).toMatchObject({ status: 'completed', hookState: { 'koagent.trace': { version: 1 } } });
    }
    const keys = reportKeys('chores', passed.id);
    expect(await store.keyValues!.get(keys.byId)).toEqual(passed);
    expect(await store.keyValues!.get(keys.passed)).toEqual(passed);
    const failed = await evaluate({ name: 'chores', agent: () => createAgent({ model: mockModel(['Nope.']) }), dataset: examples(2), scorers: { done: exact() }, thresholds: { done: 1 }, store });
    expect(failed.passed).toBe(false);
    expect(await store.keyValues!.get(keys.latest)).toEqual(failed);
    expect(await store.keyValues!.get(keys.passed)).toEqual(passed);
  });

  it("compares with the store's latest report that passed its gate, given baseline: 'stored'", async () => {
    const store = memoryStore();
    /** An evaluation whose example i gets answers[i], held to the stored baseline unless told otherwise. */
    const run = (answers: string[], held = true): Promise<EvalReport> => evaluate({
      name: 'stored', agent: (example) => createAgent({ model: mockModel([answers[Number(example.id.slice(1)) - 1]]) }),
      dataset: examples(4), scorers: { done: exact() }, store, ...(held ? { baseline: 'stored' as const } : {}),
    });
    await expect(run(['Done.', 'Done.', 'Done.', 'Done.'])).rejects.toThrow('evaluate: baseline \'stored\': the store holds no evaluation "stored" that passed its gate yet; run one without a baseline first');
    const first = await run(['Done.', 'Done.', 'Done.', 'No.'], false);
    const worse = await run(['Done.', 'Done.', 'No.', 'No.']);
    expect(worse.baseline).toBe(first.id);
    expect(worse.checks).toEqual([{ scorer: 'done', kind: 'baseline', passed: false, message: 'done: mean 0.50 fell 0.25 below the baseline 0.75, more than the margin 0.00' }]);
    // The failed one did not become the baseline: the next is still held to the first.
    const same = await run(['Done.', 'Done.', 'Done.', 'No.']);
    expect(same).toMatchObject({ baseline: first.id, passed: true });
    await expect(evaluate({ agent: createAgent({ model: mockModel(['x']) }), dataset: examples(1), scorers: { done: exact() }, baseline: 'stored' })).rejects.toThrow("evaluate: baseline 'stored' is read from the store's key values: give store");
  });
});

describe('runs and scorers that fail', () => {
  it('scores a run that failed 0 on every scorer, with the failure as the reason, and counts it', async () => {
    const report = await evaluate({
      agent: (example) => createAgent({ model: mockModel([example.id === 'e2' ? { error: 'the model is down' } : 'Done.']) }),
      dataset: examples(3), scorers: { done: exact(), short: (run) => run.text.length < 10 }, thresholds: { done: 0.9 },
    });
    expect(report.failedRuns).toBe(1);
    const failed = report.examples[1];
    expect(failed).toMatchObject({ id: 'e2', status: 'failed', error: expect.stringContaining('the model is down'), runId: expect.stringMatching(/^run_/) });
    expect(failed.scores.done).toEqual({ score: 0, pass: false, error: true, reason: expect.stringMatching(/^the run failed: .*the model is down/) });
    expect(failed.scores.short).toMatchObject({ score: 0, error: true });
    expect(report.passed).toBe(false);
  });

  it("gives 0 for a scorer that throws or gives something that is not a score, saying so; the other scorers' scores stand", async () => {
    const report = await evaluate({
      agent: createAgent({ model: mockModel(['Done.']) }), dataset: examples(1),
      scorers: { throws: () => { throw new Error('no luck'); }, big: () => 3, word: () => 'yes' as never, fine: () => ({ score: 0.5, reason: 'half' }) },
    });
    expect(report.examples[0].scores).toEqual({
      throws: { score: 0, pass: false, error: true, reason: 'the scorer threw: no luck' },
      big: { score: 0, pass: false, error: true, reason: 'the scorer gave 3, not a score: return a number from 0 to 1, true or false, or { score, reason }' },
      word: { score: 0, pass: false, error: true, reason: 'the scorer gave "yes", not a score: return a number from 0 to 1, true or false, or { score, reason }' },
      fine: { score: 0.5, pass: false, reason: 'half' },
    });
  });

  it('rejects with the reason when its signal aborts, and stores no report (a run called off is not a failed run)', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const model: ModelProvider = { name: 'stopper', async generate() {
      controller.abort(new Error('called off'));
      return { message: { role: 'assistant', content: 'Done.' }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
    } };
    await expect(evaluate({ name: 'off', agent: createAgent({ model }), dataset: examples(1), scorers: { done: exact() }, store, signal: controller.signal })).rejects.toThrow('called off');
    expect(await store.keyValues!.get(reportKeys('off').latest)).toBeUndefined();
  });

  it('tells onExample each result as it is scored', async () => {
    const seen: string[] = [];
    await evaluate({ agent: createAgent({ model: mockModel(['a', 'b', 'c']) }), dataset: examples(3), scorers: { done: exact() }, concurrency: 1, onExample: (result) => seen.push(result.id) });
    expect(seen).toEqual(['e1', 'e2', 'e3']);
  });
});

describe('options', () => {
  const agent = createAgent({ model: mockModel([]) });

  it('are checked before any run starts, each mistake named with its fix', async () => {
    const model = mockModel(['Done.']);
    const checked = (options: object) => evaluate({ agent: createAgent({ model }), dataset: examples(1), scorers: { done: exact() }, ...options } as never);
    await expect(checked({ concurency: 2 })).rejects.toThrow('evaluate: concurency is not an option of evaluate; did you mean `concurrency`?');
    await expect(checked({ concurrency: 0 })).rejects.toThrow('evaluate: concurrency must be a whole number ≥ 1');
    await expect(checked({ scorers: {} })).rejects.toThrow('evaluate: scorers is empty: give at least one, e.g. { answer: exact() }');
    await expect(checked({ scorers: { done: 'exact' } })).rejects.toThrow('evaluate: scorers.done must be a function');
    await expect(checked({ name: 'my eval' })).rejects.toThrow('evaluate: name must be a name without spaces or colons');
    await expect(checked({ margin: { dnoe: 0.1 } })).rejects.toThrow('evaluate: margin: dnoe is not a scorer of this evaluation (margins name scorers); did you mean `done`?');
    expect(model.calls).toEqual([]);
  });

  it('refuse an agent given by name without the workers\' client, and a missing agent or dataset', async () => {
    await expect(evaluate({ agent: 'weather', dataset: examples(1), scorers: { done: exact() } })).rejects.toThrow('evaluate: agent "weather" is a name, which only the workers know: give the client too');
    await expect(evaluate({ dataset: examples(1), scorers: { done: exact() } } as never)).rejects.toThrow('evaluate: agent is missing');
    await expect(evaluate({ agent, scorers: { done: exact() } } as never)).rejects.toThrow('evaluate: dataset is missing');
  });
});
