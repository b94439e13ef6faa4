import { optionsSchema, parseOptions, toolError, type GenerateResult, type Message, type Middleware, type ModelContext, type RunState, type ToolContext, type ToolOutcome, type ToolSpec } from '../api.js';
import { z } from 'zod';

// The events this layer emits, declared so that `AgentEvent` and `ctx.emit` know them.
declare module '../api.js' {
  interface MiddlewareEvents {
    'todo-list.updated': { todos: Todo[] };
  }
}

/**
 * Where an item of the plan stands.
 *
 * @example const done: TodoStatus = 'completed';
 *
 * @inline
 */
export type TodoStatus = 'pending' | 'in_progress' | 'completed';

/**
 * One item of the plan the model keeps with `write_todos`.
 *
 * @example const todo: Todo = { content: 'Read the failing test', status: 'in_progress' };
 */
export interface Todo {
  content: string;
  status: TodoStatus;
}

/**
 * Options of `todoListMiddleware`: the tool's name and description, and the instructions on
 * when to plan that every request's system prompt gets.
 *
 * @example todoListMiddleware({ instructions: 'Plan every task of more than two steps with write_todos.' })
 *
 * @inline
 */
export interface TodoListOptions {
  /** The planning tool's name (default `write_todos`); it must not be one of the agent's tools. */
  toolName?: string;
  /** What the model is told the tool does, in place of the built-in description. */
  description?: string;
  /** Added to the system prompt of every request: when to plan and how (default: built-in text; `false`: none). */
  instructions?: string | false;
}

/** The hook state's key, and the middleware's name. */
const NAME = 'todo-list';

const todoSchema = z.object({
  content: z.string({ error: 'must be the text of the item' }).trim().min(1, { error: 'must not be empty' }),
  status: z.enum(['pending', 'in_progress', 'completed'], { error: "must be 'pending', 'in_progress' or 'completed'" }),
});
const listSchema = z.array(todoSchema);
/** The tool's arguments: the whole list, every time (extra fields of an item are dropped). */
const argsSchema = z.object({ todos: z.array(todoSchema, { error: 'must be the whole list: an array of { content, status }' }) });

const todoListOptionsSchema = optionsSchema({
  toolName: z.string({ error: 'must be a tool name' }).regex(/^[a-zA-Z0-9_-]{1,64}$/, { error: 'must be a tool name (letters, digits, _ and -, at most 64)' }).optional(),
  description: z.string({ error: 'must be a string' }).optional(),
  instructions: z.union([z.string(), z.literal(false)], { error: 'must be a string, or false for none' }).optional(),
}, { noun: 'a todo list option', aliases: { name: 'toolName', tool: 'toolName', prompt: 'instructions', systemPrompt: 'instructions', toolDescription: 'description' } });

const defaultDescription = (tool: string) =>
  `Write your plan for the current task as a todo list. Send the whole list every time (it replaces the one before): ` +
  `each item is { content, status }, status 'pending', 'in_progress' or 'completed'. ${tool === 'write_todos' ? 'Call it' : `Call ${tool}`} once per turn at most.`;

const defaultInstructions = (tool: string) =>
  `You can plan with the ${tool} tool. For a task of three or more steps, or one the user gives in parts, write the plan ` +
  `before you start; mark an item in_progress when you begin it and completed as soon as it is done (one in_progress at a time), ` +
  `and add the steps you discover on the way. Do not plan simple requests of a step or two. Your current list, when you have one, ` +
  `is shown to you at the end of the conversation.`;

const LABEL: Record<TodoStatus, string> = { pending: 'pending', in_progress: 'in progress', completed: 'completed' };

/** The list as the model is shown it, after the conversation. */
function reminder(todos: readonly Todo[], tool: string): Message {
  const lines = todos.map((todo, i) => `${i + 1}. [${todo.status}] ${todo.content}`);
  return { role: 'user', content: `<todo-list>\nYour todo list, as you last wrote it with ${tool} (a note from the runtime, not from the user):\n${lines.join('\n')}\n</todo-list>` };
}

/** "3 items: 1 completed, 1 in progress, 1 pending". */
function summary(todos: readonly Todo[]): string {
  const counts = (['completed', 'in_progress', 'pending'] as const).map((status) => [status, todos.filter((t) => t.status === status).length] as const).filter(([, n]) => n > 0);
  return `Todo list updated: ${todos.length} item${todos.length === 1 ? '' : 's'}${counts.length > 0 ? `: ${counts.map(([status, n]) => `${n} ${LABEL[status]}`).join(', ')}` : ''}.`;
}

/** What the model reads for arguments that are no list: where, and what a good call looks like. */
function argsProblem(error: z.ZodError, tool: string): string {
  const issue = error.issues[0];
  const at = issue.path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
  return `Invalid arguments for ${tool}: ${at === '' ? 'the arguments' : at} ${issue.message.replace(/^Invalid input: expected (\w+), received (\w+)$/, 'must be $1, not $2')}. ` +
    `The list was not changed. Send the whole list: { "todos": [{ "content": "…", "status": "pending" | "in_progress" | "completed" }] }`;
}

/**
 * The todo list a run keeps (`result.state`, a stored or resumed state), as the model last
 * wrote it; empty when it wrote none.
 *
 * @example const open = todosOf(result.state).filter((todo) => todo.status !== 'completed');
 */
export function todosOf(state: Pick<RunState, 'hookState'> | undefined): Todo[] {
  const kept = state?.hookState?.[NAME] as { todos?: unknown } | undefined;
  const parsed = listSchema.safeParse(kept?.todos);
  return parsed.success ? parsed.data : [];
}

/**
 * Planning for an agent: a built-in `write_todos` tool with which the model writes its plan as a
 * todo list (the whole list each time), kept in the run's hook state, so it survives suspend,
 * resume and recovery, and shown to the model on every request after the conversation (for
 * that request only: the stored transcript holds no copies). The agent does not have the tool:
 * the model layer adds its spec to each request and the tool layer answers its calls before
 * validation (`rawCalls`), so put this middleware before every middleware with a tool layer.
 * Read the list with `todosOf(result.state)`.
 *
 * @example createAgent({ model, tools, middleware: [todoListMiddleware()] });
 */
export function todoListMiddleware(options: TodoListOptions = {}): Middleware & { name: 'todo-list' } {
  if (typeof options !== 'object' || options === null) throw new TypeError('todoListMiddleware(options): options must be an object');
  parseOptions(todoListOptionsSchema, options, 'todoListMiddleware');
  const tool = options.toolName ?? 'write_todos';
  const instructions = options.instructions === false ? undefined : options.instructions ?? defaultInstructions(tool);
  const spec: ToolSpec = Object.freeze({ name: tool, description: options.description ?? defaultDescription(tool), parameters: z.toJSONSchema(argsSchema, { io: 'input' }) as Record<string, unknown> });

  /** The message arrays this layer made for requests, so a retried request is not added to twice. */
  const made = new WeakSet<Message[]>();
  /**
   * Per segment (its `ctx.state`): the planning calls of the last reply that the tool layer has
   * not seen yet, read from the reply itself, so the transcript is walked only when one is left:
   * settled before this layer as an unknown tool, by validation, the layer is misplaced.
   */
  const unseen = new WeakMap<object, Set<string>>();

  /** Whether an unseen planning call was refused as an unknown tool (a layer outside may have dropped it instead). */
  function misplaced(ctx: ModelContext, ids: Set<string>): boolean {
    unseen.delete(ctx.state);
    const messages = ctx.messages;
    for (let i = messages.length - 1; i >= 0 && messages[i].role === 'tool'; i--) {
      const m = messages[i] as Extract<Message, { role: 'tool' }>;
      if (ids.has(m.toolCallId) && (m.metadata?.error as { kind?: string } | undefined)?.kind === 'not_found') return true;
    }
    return false;
  }

  return {
    name: NAME,
    rawCalls: true,
    model: function showTodos(ctx: ModelContext, next: () => Promise<GenerateResult>): Promise<GenerateResult> {
      const tools = ctx.request.tools ?? [];
      if (tools.some((s) => s.name === tool && s !== spec)) {
        throw new TypeError(`todoListMiddleware: the agent has a tool named ${tool} already; give the planning tool another name with { toolName }`);
      }
      const ids = unseen.get(ctx.state);
      if (ids !== undefined && ids.size > 0 && misplaced(ctx, ids)) {
        throw new TypeError(`todoListMiddleware: a ${tool} call was refused as an unknown tool before this middleware saw it; put todoListMiddleware before every middleware that has a tool layer`);
      }
      if (!tools.includes(spec)) ctx.request.tools = [...tools, spec];
      const todos = todosOf(ctx.state);
      // A layer outside that calls next() again (a retry) sends the request this layer made already.
      const messages = ctx.request.messages;
      if ((instructions === undefined && todos.length === 0) || made.has(messages)) return next().then(noteCalls);
      // This request's own messages: the transcript stays as it is, with no copy of the list in it.
      // One pass over the transcript: each read of it goes through its view.
      const sent: Message[] = [];
      const first = messages[0];
      let from = 0;
      if (instructions !== undefined) {
        if (first?.role === 'system') from = 1;
        // The system message keeps what else it carries (a layer's provider options: a cache mark).
        sent.push(from === 1 ? { ...(first as Extract<Message, { role: 'system' }>), content: `${(first as { content: string }).content}\n\n${instructions}` } : { role: 'system', content: instructions });
      }
      for (let i = from; i < messages.length; i++) sent.push(messages[i]);
      if (todos.length > 0) sent.push(reminder(todos, tool));
      made.add(sent);
      ctx.request.messages = sent;
      return next().then(noteCalls);

      function noteCalls(result: GenerateResult): GenerateResult {
        const calls = result.message.toolCalls?.filter((call) => call.name === tool);
        if (calls !== undefined && calls.length > 0) unseen.set(ctx.state, new Set(calls.map((call) => call.id)));
        return result;
      }
    },
    tool: function writeTodos(ctx: ToolContext, next: () => Promise<ToolOutcome>): Promise<ToolOutcome> | ToolOutcome {
      if (ctx.toolName !== tool) return next();
      unseen.get(ctx.state)?.delete(ctx.toolCallId);
      // Two lists in one turn would race: the model is asked for one.
      const turn = ctx.messages.findLast((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === ctx.toolCallId));
      const calls = turn?.role === 'assistant' ? (turn.toolCalls ?? []).filter((c) => c.name === tool).length : 1;
      if (calls > 1) return toolError('validation', `${tool} was called ${calls} times in one turn, so none of the lists was kept; call it once, with the whole list`);
      const parsed = argsSchema.safeParse(ctx.args);
      if (!parsed.success) return toolError('validation', argsProblem(parsed.error, tool));
      const { todos } = parsed.data;
      ctx.setHookState(NAME, { todos });
      ctx.emit?.({ type: 'todo-list.updated', todos });
      return { result: summary(todos) };
    },
  };
}
