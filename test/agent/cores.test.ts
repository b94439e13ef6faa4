// Which composed core a run uses: built once per key, all dropped when the agent's layers change.
import { describe, expect, it } from 'vitest';
import type { NamedMiddleware } from '../../src/core/vocabulary/middleware.js';
import type { AgentCore } from '../../src/core/run/agent-core.js';
import { AgentCores } from '../../src/agent/cores.js';
import type { OutputPlan } from '../../src/features/structured-output.js';

/** Cores that record what each build was for; a core here is only a token. */
function cores(agentOutput?: OutputPlan) {
  const builds: { inherited: readonly NamedMiddleware[]; output: OutputPlan | undefined }[] = [];
  const made = new AgentCores((inherited, output) => {
    builds.push({ inherited, output });
    return { build: builds.length } as unknown as AgentCore;
  }, agentOutput);
  return { made, builds };
}
const plan = (name: string) => ({ name }) as unknown as OutputPlan;

describe('AgentCores', () => {
  it("builds the agent's own core once, with no inherited layers and the agent's output", () => {
    const own = plan('own');
    const { made, builds } = cores(own);
    const first = made.for(undefined);
    expect(made.for(undefined)).toBe(first);
    expect(made.for(undefined, own)).toBe(first);
    expect(builds).toEqual([{ inherited: [], output: own }]);
  });

  it('builds one core per output schema a run brought, apart from the agent\'s own', () => {
    const { made, builds } = cores();
    const a = plan('a');
    const b = plan('b');
    expect(made.for(undefined, a)).toBe(made.for(undefined, a));
    expect(made.for(undefined, b)).not.toBe(made.for(undefined, a));
    expect(made.for(undefined)).not.toBe(made.for(undefined, a));
    expect(builds.map((x) => x.output)).toEqual([a, b, undefined]);
  });

  it("builds one core per parent's layers, with those layers outermost", () => {
    const { made, builds } = cores();
    const parent: NamedMiddleware[] = [];
    const other: NamedMiddleware[] = [];
    expect(made.for(parent)).toBe(made.for(parent));
    expect(made.for(other)).not.toBe(made.for(parent));
    expect(made.for(undefined)).not.toBe(made.for(parent));
    expect(builds.map((x) => x.inherited)).toEqual([parent, other, []]);
    expect(builds[0].inherited).toBe(parent);
  });

  it('builds every core again after clear()', () => {
    const { made, builds } = cores();
    const parent: NamedMiddleware[] = [];
    const a = plan('a');
    const before = [made.for(undefined), made.for(parent), made.for(undefined, a)];
    made.clear();
    const after = [made.for(undefined), made.for(parent), made.for(undefined, a)];
    after.forEach((core, i) => expect(core).not.toBe(before[i]));
    expect(builds).toHaveLength(6);
  });
});
