// HookAction `state`: a hook keeps its own notes in the run state. Here a hook counts the
// model's replies and lists the tools it asked for. The run pauses for approval, its state goes
// through JSON (as it would through a database), and a freshly built agent resumes it: the
// hook finds its notes again as ctx.hookState and carries on counting.
// Run offline: npx tsx examples/hooks/state.ts
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type RunState } from 'koagent';
import type { Hook, HookContext } from 'koagent/hooks';
import { mockModel, type MockReply } from 'koagent/testing';

interface Notes {
  replies: number;
  tools: string[];
}

/** A class: with no `name`, the hook is known by its class name, `ReplyNotes`. */
class ReplyNotes implements Hook {
  afterModel(ctx: HookContext) {
    const notes = (ctx.hookState as Notes | undefined) ?? { replies: 0, tools: [] };
    const reply = ctx.messages[ctx.messages.length - 1];
    const asked = reply.role === 'assistant' ? (reply.toolCalls ?? []).map((c) => c.name) : [];
    // What is returned is what gets kept, as plain JSON.
    return { state: { replies: notes.replies + 1, tools: [...notes.tools, ...asked] } };
  }
}

const lookup = defineTool({ name: 'lookup', description: 'Find an order', input: z.object({ order: z.string() }), execute: ({ order }) => ({ order, paid: 40 }) });
const refund = defineTool({ name: 'refund', description: 'Refund an order', input: z.object({ order: z.string() }), needsApproval: true, execute: ({ order }) => `refunded ${order}` });

/** The same agent every time: hook state is found again by hook name, so build it the same way. */
function supportAgent(script: MockReply[]) {
  return createAgent({ name: 'support', model: mockModel(script), tools: [lookup, refund], hooks: [new ReplyNotes()] });
}

export async function hookStateAcrossResume() {
  const first = supportAgent([
    { toolCalls: [{ name: 'lookup', args: { order: 'A-17' } }] },
    { toolCalls: [{ name: 'refund', args: { order: 'A-17' } }] },
  ]);
  const paused = await first.run('Please refund order A-17');
  const stored = JSON.stringify(paused.state);

  // Later, perhaps in another process: a new agent object resumes the stored state.
  const state = JSON.parse(stored) as RunState;
  const second = supportAgent(['Order A-17 is refunded.']);
  const done = await second.resume(state, { [state.pendingApprovals[0].toolCallId]: true });
  return { status: paused.status, notesWhilePaused: paused.state.hookState.ReplyNotes as Notes, notesAtTheEnd: done.state.hookState.ReplyNotes as Notes, answer: done.text };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { status, notesWhilePaused, notesAtTheEnd, answer } = await hookStateAcrossResume();
  console.log(`first segment ${status}; the hook's notes: ${JSON.stringify(notesWhilePaused)}`);
  console.log(`after a resume from JSON: ${JSON.stringify(notesAtTheEnd)}`);
  console.log(`answer: ${answer}`);
}
