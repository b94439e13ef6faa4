// The hook of examples/hooks/message.ts, as hook source text.
import { mapText, textOf } from 'koagent';

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

export default {
  name: 'mask-emails',
  afterModel(ctx) {
    // ctx.messages ends with the reply the model just made.
    const reply = ctx.messages[ctx.messages.length - 1];
    if (reply.role !== 'assistant') return;
    // mapText masks the text whether the reply is a string or parts (reasoning is left as it is).
    const masked = mapText(reply.content, (text) => text.replace(EMAIL, '[e-mail hidden]'));
    if (textOf(masked) !== textOf(reply.content)) return { message: { ...reply, content: masked } };
  },
};
