// The hook of examples/hooks/output.ts, as hook source text.
import { textOf } from 'koagent';

export default {
  name: 'parse-invoice',
  afterModel(ctx) {
    const reply = ctx.messages[ctx.messages.length - 1];
    const json = reply.role === 'assistant' ? /\{[\s\S]*\}/.exec(textOf(reply.content))?.[0] : undefined;
    if (json === undefined) return;
    const invoice = JSON.parse(json);
    return { end: true, output: invoice };
  },
};
