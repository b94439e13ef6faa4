// A human decision as given to resume (or to a worker client's answer), checked field by field:
// fail closed, a misspelt field refused naming the one meant, the actor made `{ id, name? }`.
import { lazily } from './lazy.js';
import { z } from 'zod';
import { optionsSchema, parseOptions } from './options.js';
import type { DecisionActor, DecisionSurface } from './state.js';

/** The surface a decision names when it names none: a program calling `agent.resume`. */
export const DEFAULT_SURFACE: DecisionSurface = 'api';

/** A surface of one's own: lower case, short, no spaces (so logs and span attributes stay tidy). */
const SURFACE = /^[a-z][a-z0-9_.:-]{0,63}$/;
const MAX_ACTOR = 200;

/** A decision as a resume keeps it: its fields checked, its actor as `{ id, name? }`. */
export interface CheckedDecision {
  approved: boolean;
  reason?: string;
  args?: unknown;
  actor?: DecisionActor;
  surface: DecisionSurface;
}

// Made on first use: most programs never resume a run (see the state schema).
const decisionSchema = lazily((): z.ZodType => {
  const text = (what: string) => z.string({ error: `must be a string (${what})` }).min(1, { error: `must not be empty (${what})` }).max(MAX_ACTOR, { error: `must be at most ${MAX_ACTOR} characters (${what})` });
  const actor = z.union([
    text("who decided, e.g. 'ada@example.com'"),
    optionsSchema({ id: text('who decided'), name: text('a name to show').optional() }, { noun: "a field of a decision's actor", aliases: { user: 'id', email: 'id', displayName: 'name' } }),
  ], { error: "must be a string, or { id: string, name?: string } (who decided)" });
  const surface = z.string({ error: "must be a string such as 'api', 'cli', 'studio', 'worker-client' or one of your own" })
    .regex(SURFACE, { error: "must be a short lower-case name such as 'api', 'cli', 'studio', 'worker-client' or 'slack' (letters, digits, - _ . :, at most 64 characters)" });
  return optionsSchema({
    approved: z.boolean(),
    reason: z.string({ error: 'must be a string (why, told to the model on a denial)' }).optional(),
    args: z.unknown().optional(),
    actor: actor.optional(),
    surface: surface.optional(),
  }, { noun: 'a field of a decision', aliases: { approve: 'approved', by: 'actor', user: 'actor', decidedBy: 'actor', editedArgs: 'args', arguments: 'args', input: 'args', via: 'surface', source: 'surface', channel: 'surface' } });
});

/**
 * One decision checked and made plain: `true`/`false` as `{ approved }`, the actor as
 * `{ id, name? }`, the surface defaulted. A misuse throws what `fail` makes of the message,
 * which names the field (`the decision for "p": reasn is not a field of a decision; did you mean `reason`?`).
 *
 * @example const checked = checkDecision('call_1', { approved: true, actor: 'ada' }, (m) => new TypeError(m));
 */
export function checkDecision(id: string, decision: unknown, fail: (message: string) => Error): CheckedDecision {
  if (typeof decision === 'boolean') return { approved: decision, surface: DEFAULT_SURFACE };
  const approved = (decision as { approved?: unknown } | null | undefined)?.approved;
  if (typeof decision !== 'object' || decision === null || Array.isArray(decision) || typeof approved !== 'boolean') {
    throw fail(`the decision for "${id}" must be true, false or { approved: boolean, reason?: string, args?, actor?, surface? }`);
  }
  let parsed: { approved: boolean; reason?: string; args?: unknown; actor?: string | DecisionActor; surface?: string };
  try {
    parsed = parseOptions(decisionSchema(), decision, `the decision for "${id}"`) as typeof parsed;
  } catch (error) {
    throw fail((error as Error).message);
  }
  const checked: CheckedDecision = { approved, surface: parsed.surface ?? DEFAULT_SURFACE };
  if (parsed.reason !== undefined) checked.reason = parsed.reason;
  if (parsed.args !== undefined) checked.args = parsed.args;
  if (parsed.actor !== undefined) checked.actor = typeof parsed.actor === 'string' ? { id: parsed.actor } : { id: parsed.actor.id, ...(parsed.actor.name !== undefined ? { name: parsed.actor.name } : {}) };
  return checked;
}

