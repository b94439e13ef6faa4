import type { Layer } from '../core/vocabulary/layer.js';
import type { Tool, ToolAnnotations, ToolContext } from '../core/vocabulary/contexts.js';
import { describe } from '../core/vocabulary/errors.js';
import type { PermissionDecision } from '../core/vocabulary/events.js';
import { ownValue } from '../core/vocabulary/json.js';
import { functionSchema, optionsSchema } from '../core/vocabulary/options.js';
import { toolError, type ToolOutcome } from '../core/vocabulary/outcome.js';
import { hintAliases, hintFields } from './define.js';
import { z } from 'zod';

/**
 * One permission rule. Rules are tried in order; the first that matches decides.
 *
 * @example { tool: 'fs_*', decision: 'ask', reason: 'File access needs a human' }
 * @example { when: (name, args) => name === 'pay' && Number(args.amount) > 100, decision: 'deny' }
 * @example { annotations: { destructiveHint: true }, decision: 'ask', reason: 'It may destroy data' }
 */
export interface PermissionRule {
  /** Shown in records; defaults to the `tool` pattern, else `rule#<index>`. */
  name?: string;
  /** An exact tool name or a glob (`*` any run of characters, `?` one character). */
  tool?: string;
  /**
   * Matches tools whose annotations have each of these values (`{ destructiveHint: true }`); a
   * tool without the annotation does not match. With `tool` or `when` too, all must match.
   */
  annotations?: Partial<Record<Exclude<keyof ToolAnnotations, 'title'>, boolean>>;
  /** A predicate on the call (the args as the layers left them, and the tool); with `tool` too, both must match. One that throws denies the call. */
  when?: (toolName: string, args: Record<string, unknown>, tool: Tool) => boolean | Promise<boolean>;
  decision: PermissionDecision;
  reason?: string;
}

/**
 * The agent's `permissions` option: rules, or `{ rules, default }` (the default is `allow`).
 *
 * @example createAgent({ model, tools, permissions: { rules: [{ tool: 'read_*', decision: 'allow' }], default: 'ask' } })
 *
 * @inline
 */
export type PermissionsOption = PermissionRule[] | { rules: PermissionRule[]; default?: PermissionDecision };

const decision = z.enum(['allow', 'deny', 'ask'], { error: "must be 'allow', 'deny' or 'ask'" });

const ruleSchema = optionsSchema({
  name: z.string({ error: 'must be a string' }).optional(),
  tool: z.string({ error: 'must be a string (a name or a glob like "fs_*")' }).optional(),
  annotations: optionsSchema(hintFields, { noun: 'a tool annotation a rule can match', aliases: hintAliases }).optional(),
  when: functionSchema('a function (toolName, args, tool) => boolean').optional(),
  decision,
  reason: z.string({ error: 'must be a string' }).optional(),
}, { noun: 'a field of a permission rule', aliases: { action: 'decision', effect: 'decision', verdict: 'decision', match: 'tool', pattern: 'tool', if: 'when', hints: 'annotations' } })
  .refine((rule) => rule.tool !== undefined || rule.when !== undefined || rule.annotations !== undefined, { error: 'needs a tool name or glob (tool), annotations to match, or a predicate (when)' });

/** The shape of the `permissions` option: a list of rules, or `{ rules, default }`. */
export const permissionsSchema = z.union([
  z.array(ruleSchema),
  optionsSchema({ rules: z.array(ruleSchema, { error: 'must be an array of rules' }), default: decision.optional() }, { noun: 'a field of permissions', aliases: { fallback: 'default', otherwise: 'default' } }),
], { error: 'must be an array of rules or { rules: [...], default? }' });

interface CompiledRule {
  name: string;
  pattern?: RegExp;
  annotations?: [keyof ToolAnnotations, boolean][];
  when?: PermissionRule['when'];
  decision: PermissionDecision;
  reason?: string;
}

/** Whether any rule, or the default, can ask a human: then the approval step is needed. */
export function mayAsk(option: PermissionsOption | undefined): boolean {
  if (option === undefined) return false;
  const rules = Array.isArray(option) ? option : option.rules ?? [];
  return (!Array.isArray(option) && option.default === 'ask') || rules.some((r) => r?.decision === 'ask');
}

function compile(option: PermissionsOption | undefined): { rules: CompiledRule[]; fallback: PermissionDecision } {
  if (option === undefined) return { rules: [], fallback: 'allow' };
  const list = Array.isArray(option) ? option : option?.rules;
  const fallback = Array.isArray(option) ? 'allow' : option?.default ?? 'allow';
  const rules = list.map((rule, i) => {
    return {
      name: rule.name ?? rule.tool ?? (rule.annotations === undefined ? `rule#${i}` : annotationsName(rule.annotations)),
      pattern: rule.tool === undefined ? undefined : globToRegExp(rule.tool),
      annotations: rule.annotations === undefined ? undefined : (Object.entries(rule.annotations) as [keyof ToolAnnotations, boolean][]),
      when: rule.when,
      decision: rule.decision,
      reason: rule.reason,
    };
  });
  return { rules, fallback };
}

/** A rule named by what it matches: `annotations:destructiveHint=true`. */
function annotationsName(annotations: NonNullable<PermissionRule['annotations']>): string {
  return `annotations:${Object.entries(annotations).map(([key, value]) => `${key}=${value}`).join(',')}`;
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/**
 * The permissions step of the tool stack: rules decide allow, deny or ask. A deny settles the
 * call as `denied`; an ask makes the approval step pause for a human.
 */
export function permissionsStep(option: PermissionsOption | undefined): Layer<ToolContext, ToolOutcome> {
  const { rules, fallback } = compile(option);
  return {
    name: 'koagent:permissions',
    async fn(ctx, next) {
      let matched: CompiledRule | undefined;
      for (const rule of rules) {
        if (rule.pattern !== undefined && !rule.pattern.test(ctx.toolName)) continue;
        if (rule.annotations !== undefined && !rule.annotations.every(([key, value]) => ownValue(ctx.tool!.annotations as Record<string, unknown> | undefined, key) === value)) continue;
        if (rule.when !== undefined) {
          let hit: unknown;
          try {
            hit = await rule.when(ctx.toolName, ctx.args, ctx.tool!);
          } catch (error) {
            // The rule could not decide, so the call is denied (fail closed), as a throwing guardrail blocks.
            matched = { ...rule, decision: 'deny', reason: `permission rule "${rule.name}" threw, so the call was denied: ${describe(error)}` };
            break;
          }
          if (!hit) continue;
        }
        matched = rule;
        break;
      }
      const decision = matched?.decision ?? fallback;
      const approved = ctx.call.decision?.approved === true;
      // A call resumed after a human approved it was recorded then (source 'approval'); the rules
      // are recorded again only when they now deny it. The record keeps an `ask` for the approval step.
      if (!approved || decision === 'deny') {
        ctx.call.decide({
          decision,
          source: matched ? 'rule' : 'default',
          ...(matched ? { rule: matched.name } : {}),
          ...(matched?.reason !== undefined ? { reason: matched.reason } : {}),
        });
      }
      if (decision === 'deny') {
        const why = matched?.reason ?? (matched ? `permission rule "${matched.name}" denies ${ctx.toolName}` : `${ctx.toolName} is not allowed by default`);
        return toolError('denied', why, matched ? `rule:${matched.name}` : 'permissions:default');
      }
      return next();
    },
  };
}
