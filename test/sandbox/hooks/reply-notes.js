// The hook of examples/hooks/state.ts, as hook source text: a class, known by its class name.
export class ReplyNotes {
  afterModel(ctx) {
    const notes = ctx.hookState ?? { replies: 0, tools: [] };
    const reply = ctx.messages[ctx.messages.length - 1];
    const asked = reply.role === 'assistant' ? (reply.toolCalls ?? []).map((c) => c.name) : [];
    // What is returned is what gets kept, as plain JSON.
    return { state: { replies: notes.replies + 1, tools: [...notes.tools, ...asked] } };
  }
}
