// The hook of examples/hooks/messages.ts, as hook source text.
const keep = 3;

export default {
  name: 'short-memory',
  beforeModel(ctx) {
    const system = ctx.messages.filter((m) => m.role === 'system');
    const rest = ctx.messages.filter((m) => m.role !== 'system');
    if (rest.length <= keep) return;
    const dropped = rest.length - keep;
    const note = { role: 'system', content: `(${dropped} earlier messages were left out)` };
    return { messages: [...system, note, ...rest.slice(-keep)] };
  },
};
