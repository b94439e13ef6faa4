// The hook of examples/hooks/end.ts, as hook source text.
const allowed = 2;

export default {
  name: 'model-call-budget',
  beforeModel(ctx) {
    if (ctx.modelCalls >= allowed) return { end: true, output: `stopped: the budget of ${allowed} model calls is spent` };
  },
};
