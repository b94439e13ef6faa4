// A scorer that asks a model you give to grade a run against criteria in words: it is shown the
// input, what was expected, the tools called and the answer, and replies with a score from 0 to 1
// and a reason, as JSON. Offline, a mockModel plays the grader.
import { z } from 'zod';
import { optionsSchema, parseOptions, textOf, type Message, type ModelProvider, type RunInput } from '../api.js';
import { shown, type Expectation, type EvalRun, type Scorer } from './scorers.js';

/**
 * Options of `modelGraded`.
 *
 * @example modelGraded({ model: openai({ model: 'gpt-5-mini' }), criteria: 'Gives the temperature in °C and says where.', passAt: 0.7 })
 *
 * @inline
 */
export interface ModelGradedOptions<E = any> {
  /** The grader: any model provider (`openai(…)`, `aiSdk(…)`, or `mockModel([...])` offline). */
  model: ModelProvider;
  /** What a good answer does, in words the grader reads (or a function of the example giving them). */
  criteria: Expectation<string, E>;
  /** The score at which an example passes (default 0.5). */
  passAt?: number;
  /** Show the grader the run's `text` (default) or its `output` (as JSON). */
  of?: 'output' | 'text';
}

const gradedSchema = optionsSchema({
  model: z.custom<ModelProvider>((value) => typeof (value as ModelProvider | null)?.generate === 'function', { error: "must be a model provider, e.g. openai({ model: 'gpt-5-mini' }) or mockModel([...])" }),
  criteria: z.union([z.string().min(1), z.custom<(example: unknown) => string>((value) => typeof value === 'function')], { error: 'must be the criteria in words, or a function of the example giving them' }),
  passAt: z.number().min(0).max(1, { error: 'must be a number from 0 to 1' }).optional(),
  of: z.enum(['output', 'text'], { error: "must be 'output' or 'text'" }).optional(),
}, { noun: 'an option of modelGraded', aliases: { grader: 'model', judge: 'model', provider: 'model', rubric: 'criteria', prompt: 'criteria', threshold: 'passAt', passMark: 'passAt' } });

const INSTRUCTIONS = `You grade the answer an AI agent gave, against the criteria you are given.
Reply with one JSON object and nothing else: {"score": <a number from 0 to 1>, "reason": "<one sentence>"}.
1 means the answer meets every criterion, 0 that it meets none.`;

const replySchema = z.object({ score: z.number().min(0).max(1), reason: z.string().optional() });

/**
 * A scorer graded by a model: it is shown the example's input and `expected`, the tools the run
 * called and its answer, and the criteria; its JSON reply gives the score and the reason. A
 * reply that is not that JSON counts as the scorer's error (score 0, with the reply quoted).
 *
 * @example scorers: { helpful: modelGraded({ model: grader, criteria: 'Answers the question asked, politely.' }) }
 */
export function modelGraded<E = any>(options: ModelGradedOptions<E>): Scorer<E> {
  if (typeof options !== 'object' || options === null) throw new TypeError("modelGraded(options): options must be an object: { model, criteria }, e.g. { model: openai({ model: 'gpt-5-mini' }), criteria: 'Answers in French.' }");
  parseOptions(gradedSchema, options, 'modelGraded');
  const { model, passAt = 0.5, of = 'text' } = options;
  return async (run: EvalRun<E>) => {
    const criteria = typeof options.criteria === 'function' ? options.criteria(run.example) : options.criteria;
    if (criteria === undefined) return undefined;
    const reply = await model.generate({
      messages: [{ role: 'system', content: INSTRUCTIONS }, { role: 'user', content: question(run, criteria, of) }],
      tools: [],
      temperature: 0,
      responseFormat: { type: 'json', name: 'grade', schema: { type: 'object', properties: { score: { type: 'number', minimum: 0, maximum: 1 }, reason: { type: 'string' } }, required: ['score', 'reason'] } },
    });
    const text = textOf(reply.message.content);
    const grade = gradeOf(text);
    return { score: grade.score, pass: grade.score >= passAt, ...(grade.reason === undefined ? {} : { reason: grade.reason }) };
  };
}

/** What the grader reads about one run. */
function question(run: EvalRun, criteria: string, of: 'output' | 'text'): string {
  const calls = run.toolCalls.map((call) => `${call.name} ${shown(call.args)}`);
  const answer = of === 'text' ? run.text : JSON.stringify(run.output, null, 2);
  return [
    `Criteria: ${criteria}`,
    '',
    `Input: ${inputText(run.example.input)}`,
    ...(run.example.expected === undefined ? [] : [`Expected: ${typeof run.example.expected === 'string' ? run.example.expected : JSON.stringify(run.example.expected)}`]),
    `Tools called: ${calls.length === 0 ? 'none' : calls.join('; ')}`,
    '',
    'Answer:',
    answer,
  ].join('\n');
}

/** The input as the grader reads it: text, or each message's role and text. */
function inputText(input: RunInput): string {
  if (typeof input === 'string') return input;
  const messages: Message[] = Array.isArray(input) ? input : [input];
  return messages.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : textOf(m.content)}`).join('\n');
}

/** The grader's reply read as `{ score, reason }`: the JSON object in it, fenced or not; anything else throws, quoting it. */
function gradeOf(text: string): z.infer<typeof replySchema> {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  let parsed: unknown;
  try {
    parsed = start === -1 || end < start ? undefined : JSON.parse(text.slice(start, end + 1));
  } catch {
    parsed = undefined;
  }
  const grade = replySchema.safeParse(parsed);
  if (!grade.success) throw new Error(`the grader's reply is not {"score": <0 to 1>, "reason": "…"}: ${shown(text)}`);
  return grade.data;
}
