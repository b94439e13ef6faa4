// Tools known only at run time (the tools of an MCP server), beside the agent's own: the agent
// reads them live through one index, so validation, permissions and the model's request see
// the toolset's tools of the moment, and they are ordinary tools in every other respect.
import type { Logger, Tool } from '../core/vocabulary/contexts.js';
import { describe } from '../core/vocabulary/errors.js';
import type { Middleware } from '../core/vocabulary/middleware.js';
import type { ToolSpec } from '../core/vocabulary/model.js';

/**
 * A source of tools known only at run time, given to an agent in `tools` beside its own tools
 * (`koagent/mcp`'s `mcpTools` is one). Its tools go through the whole tool pipeline like any
 * other; its `middleware` runs outermost in each of the agent's runs (not inside sub-agents):
 * where it connects as a segment starts, and refreshes its list between model turns.
 *
 * @example createAgent({ model, tools: [search, mcpTools({ name: 'fs', command: 'mcp-server-filesystem', args: [dir] })] })
 */
export interface Toolset {
  /** Names the toolset in warnings and errors. */
  readonly name: string;
  /** The tools offered now. Return the same array until they change: a new array is what tells the agent to re-read them. */
  tools(): readonly Tool[];
  /**
   * Layers the toolset needs in every run of the agent, outermost (e.g. `run`: connect; `model`:
   * refresh). Give them `scope: 'lead-only'` unless they should run inside sub-agents too.
   */
  readonly middleware?: Middleware;
  /** Let go of what it holds (connections, child processes). `agent.close()` calls it. */
  close?(): Promise<void>;
}

/** Close each toolset (`where` names the call); those that fail are reported together, after all were asked. */
export async function closeToolsets(toolsets: readonly Toolset[], where: string): Promise<void> {
  const closed = await Promise.allSettled(toolsets.map((set) => set.close?.()));
  const failed = closed.flatMap((r, i) => (r.status === 'rejected' ? [`toolset "${toolsets[i].name}": ${describe(r.reason)}`] : []));
  if (failed.length > 0) throw new AggregateError(closed.flatMap((r) => (r.status === 'rejected' ? [r.reason] : [])), `${where}: ${failed.join('; ')}`);
}

/**
 * Whether `value` is a toolset (an object with a `name` and a `tools()` function, and not a tool).
 *
 * @example const sets = options.tools.filter(isToolset);
 */
export function isToolset(value: unknown): value is Toolset {
  const v = value as Partial<Toolset> & { execute?: unknown } | null;
  return typeof v === 'object' && v !== null && typeof v.tools === 'function' && typeof v.name === 'string' && typeof v.execute !== 'function';
}

/**
 * The agent's tools by name: its own, then each toolset's of the moment. A toolset's tool never
 * shadows one of the agent's own or an earlier toolset's: it is left out, with a warning, so a
 * server cannot replace a local tool by naming one of its tools like it.
 */
export class ToolIndex implements ReadonlyMap<string, Tool> {
  readonly #own: ReadonlyMap<string, Tool>;
  readonly #toolsets: readonly Toolset[];
  readonly #logger: Logger;
  #seen: (readonly Tool[])[] = [];
  #map: Map<string, Tool> = new Map();
  #specs: readonly ToolSpec[] = [];

  constructor(own: ReadonlyMap<string, Tool>, toolsets: readonly Toolset[], logger: Logger) {
    this.#own = own;
    this.#toolsets = toolsets;
    this.#logger = logger;
    this.#refresh(true);
  }

  /** The agent's own tools, without any toolset's. */
  get own(): ReadonlyMap<string, Tool> {
    return this.#own;
  }

  /** The same index with one more tool of the agent's own (structured output's final-answer tool). */
  withOwn(tool: Tool): ToolIndex {
    return new ToolIndex(new Map([...this.#own, [tool.name, tool]]), this.#toolsets, this.#logger);
  }

  get hasToolsets(): boolean {
    return this.#toolsets.length > 0;
  }

  /** What the model is told of the tools of the moment. */
  get specs(): readonly ToolSpec[] {
    this.#refresh(false);
    return this.#specs;
  }

  #refresh(force: boolean): Map<string, Tool> {
    if (this.#toolsets.length === 0) {
      if (force) this.#build([]);
      return this.#map;
    }
    const lists = this.#toolsets.map((set) => set.tools());
    if (force || lists.some((list, i) => list !== this.#seen[i])) this.#build(lists);
    return this.#map;
  }

  #build(lists: (readonly Tool[])[]): void {
    const map = new Map(this.#own);
    const from = new Map<string, string>();
    lists.forEach((list, i) => {
      const set = this.#toolsets[i];
      for (const tool of list) {
        if (map.has(tool.name)) {
          const other = from.get(tool.name);
          this.#logger.warn(`koagent: toolset "${set.name}" offers a tool named "${tool.name}", as ${other === undefined ? 'one of the agent\'s own tools' : `toolset "${other}"`} does; it is left out (give the toolset a prefix to tell them apart)`);
          continue;
        }
        map.set(tool.name, tool);
        from.set(tool.name, set.name);
      }
    });
    this.#seen = lists;
    this.#map = map;
    this.#specs = [...map.values()].map((tool) => tool.spec);
  }

  get size(): number {
    return this.#refresh(false).size;
  }
  get(name: string): Tool | undefined {
    return this.#refresh(false).get(name);
  }
  has(name: string): boolean {
    return this.#refresh(false).has(name);
  }
  keys(): MapIterator<string> {
    return this.#refresh(false).keys();
  }
  values(): MapIterator<Tool> {
    return this.#refresh(false).values();
  }
  entries(): MapIterator<[string, Tool]> {
    return this.#refresh(false).entries();
  }
  forEach(fn: (tool: Tool, name: string, map: ReadonlyMap<string, Tool>) => void, thisArg?: unknown): void {
    for (const [name, tool] of this.#refresh(false)) fn.call(thisArg, tool, name, this);
  }
  [Symbol.iterator](): MapIterator<[string, Tool]> {
    return this.entries();
  }
}
