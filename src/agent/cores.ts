import type { NamedMiddleware } from '../core/vocabulary/middleware.js';
import type { AgentCore } from '../core/run/agent-core.js';
import type { OutputPlan } from '../features/structured-output.js';

/** Builds a core: the parent agent's layers (outermost) and the output schema of the runs it serves. */
export type BuildCore = (inherited: readonly NamedMiddleware[], output: OutputPlan | undefined) => AgentCore;

/**
 * The composed cores of one agent, each built on first use and all dropped when its layers
 * change: the agent's own, one per output schema a run brought, and one per parent agent's
 * layers (for its runs as a sub-agent).
 */
export class AgentCores {
  readonly #build: BuildCore;
  /** The agent's own output schema: runs with it (or none) share the agent's core. */
  readonly #output: OutputPlan | undefined;
  #own?: AgentCore;
  // Made when first needed: most agents never have a core of either kind, and clear() is cheap.
  #byOutput?: WeakMap<OutputPlan, AgentCore>;
  #byParent?: WeakMap<readonly NamedMiddleware[], AgentCore>;

  constructor(build: BuildCore, output: OutputPlan | undefined) {
    this.#build = build;
    this.#output = output;
  }

  /** The core for a run: the agent's own, or, inside a parent agent's run, one with the parent's layers outermost. */
  for(inherited: readonly NamedMiddleware[] | undefined, output: OutputPlan | undefined = this.#output): AgentCore {
    // A run's own output schema (sub-agent runs always have the agent's).
    if (output !== this.#output && output !== undefined) return builtOnce((this.#byOutput ??= new WeakMap()), output, () => this.#build([], output));
    if (inherited === undefined) return (this.#own ??= this.#build([], output));
    return builtOnce((this.#byParent ??= new WeakMap()), inherited, () => this.#build(inherited, output));
  }

  /** The agent's layers changed: every core is built again when next needed. */
  clear(): void {
    this.#own = undefined;
    this.#byOutput = undefined;
    this.#byParent = undefined;
  }
}

/** The core `cores` holds for `key`, built and kept there on first use. */
function builtOnce<K extends object>(cores: WeakMap<K, AgentCore>, key: K, build: () => AgentCore): AgentCore {
  let core = cores.get(key);
  if (core === undefined) cores.set(key, (core = build()));
  return core;
}
