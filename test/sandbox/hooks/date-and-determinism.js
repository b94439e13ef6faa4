// The hook of examples/agent-hooks/inject-context.ts, as hook source text.
const today = new Date().toISOString().slice(0, 10);

export const dateAndDeterminism = {
  name: 'date-and-determinism',
  preGenerate(ctx) {
    ctx.messages.push({ role: 'system', content: `The date today is ${today}.` });
    ctx.request.temperature = 0;
  },
};
