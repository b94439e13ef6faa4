// The run state's shape as a zod schema: what `resume` checks a state against, whole, before
// anything runs. It is tied to the `RunState` type at compile time (`satisfies`), so the type that
// documents the state and the check that guards it cannot drift apart.
import { lazily } from '../vocabulary/lazy.js';
import { z } from 'zod';
import { KoagentError } from '../vocabulary/errors.js';
import { contentProblem } from '../vocabulary/content.js';
import type { AssistantMessage, Message, ToolMessage, UserMessage } from '../vocabulary/messages.js';
import { inCallOrder, type RunState } from '../vocabulary/state.js';

/** The run state format this version of koagent writes and reads (it also reads format 2). */
export const STATE_VERSION = 3;

/** Deeper than this, a value in a state is refused: it could not be written as JSON again. */
export const MAX_STATE_DEPTH = 256;

/**
 * The schemas of a run state, made when a state is first checked: most programs never resume a
 * run, and building them is a good part of what importing koagent would otherwise cost.
 */
function buildSchemas() {
  const count = z.number().int().min(0);
  const tokens = z.number().min(0).refine(Number.isFinite, { error: 'must be a finite number' });

  /**
   * zod passes over a `__proto__` key (of a record, or of an object's catchall) without checking
   * what it holds, which koagent would then read (`state.children` as `{ "__proto__": false }`,
   * say). Such a key is a name like any other — a hook may be named `__proto__` — so its value is
   * checked here against `value`, and named by its path if it does not fit.
   */
  const protoChecked = <S extends z.ZodType>(value: z.ZodType, schema: S) => z.preprocess((input, ctx) => {
    if (typeof input !== 'object' || input === null || !Object.hasOwn(input, '__proto__')) return input;
    const checked = value.safeParse((input as Record<string, unknown>)['__proto__']);
    // Its first issue, as the record's own check would have given it.
    if (!checked.success) ctx.issues.push({ ...checked.error.issues[0], path: ['__proto__', ...checked.error.issues[0].path] } as never);
    return input;
  }, schema);

  /** A record of the state: names as keys, `__proto__` included (see `protoChecked`). */
  const record = <V extends z.ZodType>(value: V) => protoChecked(value, z.record(z.string(), value));

  const providerOptions = record(record(z.unknown())).optional();
  const toolCall = z.object({ id: z.string(), name: z.string(), args: z.unknown(), providerOptions });

  /**
   * A role's content, checked by the same rule as content entering a run (`contentProblem`), so a
   * bad part is named the same way: `state.messages[2].content[0].image must be a string …`.
   */
  const contentOf = <T>(role: 'user' | 'assistant' | 'tool') => z.unknown().superRefine((value, ctx) => {
    // The path is left empty: the issue's own path goes in front of the message.
    // Labels are not checked again: a state stored before that check was made stays resumable.
    const problem = contentProblem(value, role, '', false);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, params: { subpath: true } });
  }) as unknown as z.ZodType<T>;

  const toolMessage = z.object({ role: z.literal('tool'), toolCallId: z.string(), name: z.string(), content: contentOf<ToolMessage['content']>('tool'), metadata: record(z.unknown()).optional() });

  const message = z.discriminatedUnion('role', [
    z.object({ role: z.literal('system'), content: z.string() }),
    z.object({ role: z.literal('user'), content: contentOf<UserMessage['content']>('user') }),
    z.object({ role: z.literal('assistant'), content: contentOf<AssistantMessage['content']>('assistant'), toolCalls: z.array(toolCall).optional() }),
    toolMessage,
  ], { error: "must be a message { role: 'system' | 'user' | 'assistant' | 'tool', content, … }" }) satisfies z.ZodType<Message>;

  const decision = z.union([z.boolean(), z.object({ approved: z.boolean(), reason: z.string().optional() })]);

  const pendingApproval = z.object({ toolCallId: z.string(), toolName: z.string(), args: z.unknown(), reason: z.string().optional(), path: z.array(z.string()).optional() });

  const ledgerEntry = z.enum(['pending', 'running', 'done']);

  const actor = z.object({ id: z.string(), name: z.string().optional() });
  const decisionRecord = z.object({
    toolCallId: z.string(), toolName: z.string(), decision: z.enum(['approved', 'denied']), args: z.unknown(), editedArgs: z.unknown().optional(),
    reason: z.string().optional(), actor: actor.optional(), surface: z.string(), at: z.string(), segment: count, path: z.array(z.string()).optional(),
  });

  /** A list whose items each name a call (`idOf`): a call listed twice is refused, naming both places. */
  const callList = <T extends z.ZodType>(item: T, idOf: (item: z.infer<T>) => string, key: string) => z.array(item).superRefine((items, ctx) => {
    const seen = new Map<string, number>();
    items.forEach((value, i) => {
      const id = idOf(value);
      const first = seen.get(id);
      if (first === undefined) seen.set(id, i);
      else ctx.addIssue({ code: 'custom', path: [i, key], message: `${JSON.stringify(id)} is listed twice (first at [${first}])` });
    });
  });

  /** The schema of a run state (format version 3). */
  const state = z.object({
    version: z.literal(STATE_VERSION),
    runId: z.string().min(1),
    sessionId: z.string().min(1),
    agentName: z.string().min(1),
    agentId: z.string().min(1),
    toolsFingerprint: z.string(),
    status: z.enum(['running', 'completed', 'suspended', 'failed']),
    segment: count,
    stopReason: z.string().optional() as z.ZodType<RunState['stopReason']>,
    output: z.unknown().optional(),
    messages: z.array(message),
    steps: count,
    usage: protoChecked(z.number(), z.object({ inputTokens: tokens, outputTokens: tokens, totalTokens: tokens, modelCalls: count, toolCalls: count }).catchall(z.number())),
    pendingApprovals: z.array(pendingApproval),
    decisions: record(z.object({ approved: z.boolean(), reason: z.string().optional(), toolName: z.string().optional(), args: z.unknown(), actor: actor.optional(), surface: z.string().optional() })),
    // Absent in a state written before decisions were kept, or of a run no human decided on.
    decisionLog: z.array(decisionRecord).optional(),
    settled: callList(toolMessage, (m) => m.toolCallId, 'toolCallId'),
    ledger: callList(z.object({ id: z.string(), entry: ledgerEntry }), (call) => call.id, 'id'),
    hookState: record(z.unknown()),
    children: record(z.object({ state: z.unknown(), approvals: record(z.string()), decisions: record(decision).optional() })),
    error: z.object({ code: z.string(), message: z.string(), layer: z.string().optional() }).optional(),
    forkedFrom: z.object({ runId: z.string().min(1), step: count }).optional(),
  }) satisfies z.ZodType<RunState>;
  /** Format 2: as format 3, but for the ledger and the held results, which it kept by call id. */
  const version2 = state.extend({ version: z.literal(2), settled: record(toolMessage), ledger: record(ledgerEntry) });
  return { state, version2 };
}

const schemasOf = lazily(buildSchemas);

const refuse = (what: string) => new KoagentError('invalid_resume', `resume(state): ${what}; pass the \`state\` of a RunResult or of a RunFailedError, unchanged`);

/**
 * Check a state handed to `resume` (it may come from a database, or from anyone), whole: every
 * field against the schema, and no value nested too deep to be written as JSON again. A bad one
 * is `invalid_resume` naming its path (`state.messages[3].toolCalls[0].name`).
 */
export function checkState(value: unknown): RunState {
  if (typeof value !== 'object' || value === null) throw refuse('state is not an object');
  const version = (value as { version?: unknown }).version;
  if (version !== STATE_VERSION && version !== 2) throw refuse(`state.version is ${JSON.stringify(version)}, expected ${STATE_VERSION} (the run state format this koagent writes; it reads 2 as well)`);
  const tooDeep = deepestPath(value, MAX_STATE_DEPTH);
  if (tooDeep !== undefined) throw refuse(`${tooDeep} is nested deeper than ${MAX_STATE_DEPTH} levels`);
  const schemas = schemasOf();
  if (version === 2) {
    // Checked in its own format, so a bad field is named as the state has it, then listed.
    check(schemas.version2, value);
    value = fromVersion2(value as Version2State);
  }
  check(schemas.state, value);
  return value as RunState;
}

function check(schema: z.ZodType, value: unknown): void {
  const parsed = schema.safeParse(value);
  if (parsed.success) return;
  const issue = parsed.error.issues.find((i) => i.code === 'unrecognized_keys') ?? parsed.error.issues[0];
  if (issue.code === 'custom' && issue.params?.subpath === true) throw refuse(`${pathOf(issue.path)}${issue.message}`);
  throw refuse(`${pathOf(issue.path)} ${describe(issue, valueAt(value, issue.path))}`);
}

type Version2State = z.infer<ReturnType<typeof buildSchemas>['version2']>;

/**
 * A format 2 state as format 3 (a new object; the caller's is left as it was): the ledger and
 * the held results become lists, the ledger in the order the transcript made the calls (an
 * object lists keys that look like numbers first, whenever they were written).
 */
function fromVersion2(state: Version2State): RunState {
  const ledger = Object.entries(state.ledger).sort(inCallOrder(state.messages)).map(([id, entry]) => ({ id, entry }));
  return { ...state, version: STATE_VERSION, ledger, settled: Object.values(state.settled) } as unknown as RunState;
}

function pathOf(path: readonly PropertyKey[]): string {
  return `state${path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('')}`;
}

function describe(issue: z.core.$ZodIssue, got: unknown): string {
  if (issue.code === 'invalid_value') return `is ${JSON.stringify(got)}, expected ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.join(', ')}`}`;
  if (issue.code === 'invalid_type') {
    const expected = issue.expected === 'record' ? 'object' : issue.expected;
    return `should be ${expected === 'array' ? 'an array' : `a${/^[aeiou]/.test(expected) ? 'n' : ''} ${expected}`} (got ${got === null ? 'null' : Array.isArray(got) ? 'an array' : typeof got})`;
  }
  return issue.message.replace(/^Invalid input: /, 'should be ');
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) current = typeof current === 'object' && current !== null ? (current as Record<PropertyKey, unknown>)[key] : undefined;
  return current;
}

interface Visit {
  value: unknown;
  depth: number;
  parent: Visit | undefined;
  key: PropertyKey;
}

/** The path of the first value nested deeper than `max` levels, walking without recursion. */
function deepestPath(root: unknown, max: number): string | undefined {
  const stack: Visit[] = [{ value: root, depth: 0, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value, depth } = visit;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) {
      const path: PropertyKey[] = [];
      for (let v: Visit | undefined = visit; v?.parent !== undefined; v = v.parent) path.unshift(v.key);
      return pathOf(path);
    }
    const array = Array.isArray(value);
    for (const key of Object.keys(value)) stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1, parent: visit, key: array ? Number(key) : key });
  }
  return undefined;
}
