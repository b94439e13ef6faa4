import { z } from 'zod';
import { functionSchema, optionsSchema, ownValue, parseOptions, textOf, type Middleware, type ModelProvider, type Tool, type ToolContext, type ToolOutcome } from '../api.js';

/**
 * Produces an emulated tool's result from its (checked) arguments, in place of running it.
 *
 * @example const emulate: ToolEmulator = (args, ctx) => (ctx.toolName === 'get_weather' ? { forecast: 'sunny' } : undefined);
 *
 * @inline
 */
export type ToolEmulator = (args: any, ctx: ToolContext) => unknown;

/**
 * Options of `toolEmulatorMiddleware`: which tools, and what produces their results — a
 * function (one for all, or one per tool), else a side model call.
 *
 * @example toolEmulatorMiddleware({ tools: ['send_email'], emulate: () => ({ sent: true }) })
 *
 * @inline
 */
export interface ToolEmulatorOptions {
  /** The tools to emulate, by name, or `'all'` (default). The others run for real. */
  tools?: string[] | 'all';
  /** The result's maker: one function, or one per tool name. Without one for a tool, a model makes it. */
  emulate?: ToolEmulator | Record<string, ToolEmulator>;
  /** The model that makes results where no function does (default: the agent's), through `ctx.generate`. */
  model?: ModelProvider;
  /** Added to what the model is told (e.g. the scenario of a test: "the customer has two open orders"). */
  instructions?: string;
}

const providerSchema = z.custom<ModelProvider>((v) => typeof v === 'object' && v !== null && typeof (v as ModelProvider).generate === 'function', { error: 'must be a model provider (an object with generate(request))' });
const emulatorOptionsSchema = optionsSchema({
  tools: z.union([z.literal('all'), z.array(z.string().min(1))], { error: "must be 'all' or a list of tool names" }).optional(),
  emulate: z.union([functionSchema('a function (args, ctx) => result'), z.record(z.string(), functionSchema('a function (args, ctx) => result'))], { error: 'must be a function (args, ctx) => result, or one per tool name' }).optional(),
  model: providerSchema.optional(),
  instructions: z.string().optional(),
}, { noun: 'a tool emulator option', aliases: { only: 'tools', names: 'tools', fn: 'emulate', handler: 'emulate', results: 'emulate', provider: 'model', prompt: 'instructions', scenario: 'instructions' } });

const NAME = 'tool-emulator';

/** What the emulating model is told about the tool. */
function prompt(tool: Tool, instructions: string | undefined): string {
  return [
    `You emulate the tool "${tool.name}" for a test: you do not run it, you answer as it would.`,
    `Its description: ${tool.description}`,
    `Its arguments' JSON schema: ${JSON.stringify(tool.spec.parameters)}`,
    ...(instructions !== undefined ? [instructions] : []),
    'Reply with the result only: JSON when the tool returns data, plain text otherwise. No commentary.',
  ].join('\n');
}

/** The model's reply as a result: its JSON when it is JSON (fenced or not), else the text. */
function parsed(text: string): unknown {
  const body = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return text;
  }
}

/**
 * A middleware for tests and dry runs: the selected tools do not run; their result comes from a
 * function `(args, ctx) => result`, or from a side model call (`ctx.generate`, counted in the
 * run's usage) told the tool's description and schema. It replaces the execution only: the call
 * still passes validation, permission rules, the tool's guardrails, approval, the ledger and its
 * output schema, and every layer outside sees the outcome as a real one's, marked
 * `replacedBy: 'tool-emulator'`.
 *
 * @example createAgent({ model, tools, middleware: [toolEmulatorMiddleware({ tools: ['charge_card'], emulate: ({ amount }) => ({ charged: amount, id: 'ch_test' }) })] });
 */
export function toolEmulatorMiddleware(options: ToolEmulatorOptions = {}): Middleware & { name: 'tool-emulator' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('toolEmulatorMiddleware(options): options must be an object');
  parseOptions(emulatorOptionsSchema, options, 'toolEmulatorMiddleware');
  const { tools = 'all', emulate, model, instructions } = options;
  const selected = tools === 'all' ? undefined : new Set(tools);
  const maker = (name: string): ToolEmulator | undefined => (typeof emulate === 'function' ? emulate : ownValue(emulate, name));

  const byModel = async (tool: Tool, args: unknown, ctx: ToolContext): Promise<unknown> => {
    const request = { messages: [{ role: 'system' as const, content: prompt(tool, instructions) }, { role: 'user' as const, content: JSON.stringify(args) }], signal: ctx.signal };
    const { message } = await ctx.generate({ ...request, ...(model !== undefined ? { provider: model } : {}) }, `${NAME}:${tool.name}`);
    return parsed(textOf(message.content));
  };

  return {
    name: NAME,
    tool: async function emulateTool(ctx: ToolContext, next: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
      const real = ctx.tool;
      if (real === undefined || (selected !== undefined && !selected.has(ctx.toolName))) return next();
      const own = maker(real.name);
      let emulated = false;
      // The tool as it is, but its execution: every step inside (permissions, guardrails,
      // approval, the ledger, the output schema) treats the call as it would a real one.
      ctx.tool = Object.create(real, {
        execute: { value: (args: unknown, inner: ToolContext) => { emulated = true; return own !== undefined ? own(args, inner) : byModel(real, args, inner); } },
      }) as Tool;
      try {
        const outcome = await next();
        // Marked only when the emulation ran (not when the call was denied, waits for a human, or a layer inside answered).
        return emulated && outcome.error === undefined && outcome.replacedBy === undefined ? { ...outcome, replacedBy: NAME } : outcome;
      } finally {
        ctx.tool = real;
      }
    },
  };
}
