// The hook of examples/agent-hooks/redact-result.ts, as hook source text.
export const maskEmails = {
  name: 'mask-emails',
  postToolCall(_ctx, settled) {
    if (typeof settled.result !== 'string') return; // errors and non-text results pass through
    const masked = settled.result.replace(/[\w.]+@[\w.]+/g, '[email]');
    return { result: masked.slice(0, 1000) };
  },
};
