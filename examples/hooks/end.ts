// HookAction `end`: a hook stops the run. Here a budget hook allows a fixed number of model
// calls per run; once they are spent, beforeModel ends the run (stop reason `hook_end`) without
// calling the model again, and says why in the output.
// Run offline: npx tsx examples/hooks/end.ts
import { pathToFileURL } from 'node:url';
import { createAgent, defineTool } from 'koagent';
import type { Hook } from 'koagent/hooks';
import { mockModel } from 'koagent/testing';

export async function modelCallBudget(allowed = 2) {
  const budget: Hook = {
    name: 'model-call-budget',
    beforeModel(ctx) {
      if (ctx.modelCalls >= allowed) return { end: true, output: `stopped: the budget of ${allowed} model calls is spent` };
    },
  };
  const roll = defineTool({ name: 'roll', description: 'Roll a die', execute: () => 4 });
  // This model would roll for ever; the budget stops it.
  const model = mockModel(Array.from({ length: 10 }, () => ({ toolCalls: [{ name: 'roll' }] })));
  const agent = createAgent({ model, tools: [roll], hooks: [budget] });
  const result = await agent.run('Roll until you get a six.');
  return { stopReason: result.stopReason, output: result.output, modelCalls: result.usage.modelCalls, rolls: result.usage.toolCalls };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { stopReason, output, modelCalls, rolls } = await modelCallBudget();
  console.log(`${stopReason}: ${String(output)} (${modelCalls} model calls, ${rolls} rolls)`);
}
