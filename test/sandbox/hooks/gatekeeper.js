// The hook of examples/agent-hooks/outcomes.ts, as hook source text.
export const gatekeeper = {
  name: 'gatekeeper',
  preToolCall(ctx) {
    if (ctx.toolName === 'shell') return { deny: 'Use the workspace tools, not the shell' };
    if (ctx.toolName === 'search') return { input: { ...ctx.args, limit: 10 } };
    return undefined; // any other tool: go on as the model asked
  },
  postToolCall(_ctx, settled) {
    // Strings longer than 2000 characters are cut; anything else is kept as it is.
    return typeof settled.result === 'string' ? { result: settled.result.slice(0, 2000) } : undefined;
  },
};
