// The hook of examples/agent-hooks/default-argument.ts, as hook source text.
export const fiveByDefault = {
  name: 'five-by-default',
  preToolCall(ctx) {
    if (ctx.toolName === 'search' && ctx.args.limit === undefined) {
      return { input: { ...ctx.args, limit: 5 } };
    }
    return undefined;
  },
};
