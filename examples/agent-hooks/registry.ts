// HookRegistry: an ordered, named collection of AgentHooks (the executor-API style). An agent
// given a registry sees later changes to it. Run: npx tsx examples/agent-hooks/registry.ts
import { pathToFileURL } from 'node:url';
import { HookRegistry, type AgentHook } from 'koagent/hooks';

/** Registers one hook and returns the names the registry lists, and its size. */
export function registryExample(print: (value: unknown) => void = console.log): { names: string[]; size: number } {
  const scrubSecrets: AgentHook = {
    name: 'scrub-secrets',
    async preToolCall(ctx) {
      // Change ctx.args in place here, or throw to stop the run before the tool runs.
    },
  };

  const hooks = new HookRegistry();
  hooks.register(scrubSecrets);
  const names = hooks.list().map((hook) => hook.name);
  print(names);
  return { names, size: hooks.size() };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) registryExample();
