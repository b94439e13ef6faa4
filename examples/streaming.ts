// npx tsx examples/streaming.ts — streaming a run, offline, in three short scenes:
//  1. a redaction layer declares `holdStream: true`, so the card number it removes from the
//     model's replies never reaches the loop below, not even for a moment;
//  2. without it, text flows at once, and when a layer asks the model again the consumer gets
//     a `text.retract` for the discarded attempt before the new text;
//  3. breaking out of the loop cancels the run, which still ends cleanly, exactly once.
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type AgentEvent, type AgentStream, type Middleware, mapText, textOf } from 'koagent';
import { mockModel } from 'koagent/testing';

const CARD = '4111 1111 1111 1111';

const getOrder = defineTool({
  name: 'get_order',
  description: 'Looks an order up by id',
  input: z.object({ id: z.string() }),
  execute: ({ id }) => ({ id, status: 'charged twice', refund: 'pending', ships: 'Monday' }),
});

// Sees every reply before anyone else does; `holdStream` keeps the text back until it has.
const redactCards: Middleware = {
  name: 'redact-cards',
  holdStream: true,
  async model(_ctx, next) {
    const reply = await next();
    const content = mapText(reply.message.content, (text) => text.replace(/\b(?:\d{4} ){3}\d{4}\b/g, '[card]'));
    return { ...reply, message: { ...reply.message, content } };
  },
};

// Asks the model once more when its first answer is a draft (a stand-in for a quality check).
const rejectDrafts: Middleware = {
  name: 'reject-drafts',
  async model(_ctx, next) {
    const first = await next();
    return textOf(first.message.content).startsWith('DRAFT') ? next() : first;
  },
};

export interface StreamingDemo {
  /** What the consumer showed in scene 1, and whether the card number was in any event. */
  held: { shown: string; final: string; eventsWithCard: number };
  /** Scene 2: what was retracted, and what the consumer shows in the end. */
  retried: { retracted: string[]; shown: string; final: string };
  /** Scene 3: deltas read before the break, how the run stopped, and how often run.end fired. */
  stopped: { deltasRead: number; stopReason: string; runEnds: number };
}

/** Show a stream as a terminal would: deltas appended, retractions erased. Returns what is left on screen. */
async function show(stream: AgentStream, write: (text: string) => void, onEvent: (event: AgentEvent) => void = () => undefined): Promise<string> {
  let screen = '';
  for await (const event of stream) {
    onEvent(event);
    if (event.type === 'tool.start') write(`  [tool] ${event.toolName}(${JSON.stringify(event.args)})\n  assistant> `);
    if (event.type === 'text.delta') {
      screen += event.delta;
      write(event.delta);
    }
    if (event.type === 'text.retract') {
      screen = screen.slice(0, screen.length - event.text.length);
      write(` ⟲ (retracted ${JSON.stringify(event.text)}) `);
    }
  }
  write('\n');
  return screen;
}

export async function main(write: (text: string) => void = (text) => void process.stdout.write(text), deltaLatencyMs = 25): Promise<StreamingDemo> {
  write('1. holdStream: a redaction layer sees the reply before the stream does\n  assistant> ');
  const support = createAgent({
    name: 'support',
    model: mockModel([
      { text: 'Let me look that order up.', toolCalls: [{ name: 'get_order', args: { id: 'A-17' } }] },
      `Card ${CARD} was charged twice for order A-17; the refund is pending.`,
    ], { deltaLatencyMs }),
    tools: [getOrder],
    middleware: [redactCards],
  });
  let eventsWithCard = 0;
  const first = support.stream(`My card ${CARD} was charged twice for order A-17.`);
  const heldShown = await show(first, write, (event) => void (JSON.stringify(event).includes(CARD) && eventsWithCard++));
  const heldFinal = (await first.result).text;
  write(`  → ${eventsWithCard} stream events carried the card number\n\n`);

  write('2. no holdStream: text flows at once, and a retried call is retracted first\n  assistant> ');
  const writer = createAgent({ name: 'writer', model: mockModel(['DRAFT: otters are fish.', 'Otters are mammals of the weasel family.'], { deltaLatencyMs }), middleware: [rejectDrafts] });
  const retracted: string[] = [];
  const second = writer.stream('What are otters?');
  const retriedShown = await show(second, write, (event) => void (event.type === 'text.retract' && retracted.push(event.text)));
  const retriedFinal = (await second.result).text;
  write(`  → the screen now reads ${JSON.stringify(retriedShown)}, the transcript's reply exactly\n\n`);

  write('3. break: the consumer stops reading after five words\n  assistant> ');
  let runEnds = 0;
  const teller = createAgent({
    name: 'teller',
    model: mockModel([Array.from({ length: 60 }, (_, i) => `word${i + 1}`).join(' ')], { deltaLatencyMs }),
    onEvent: (event) => void (event.type === 'run.end' && runEnds++),
  });
  const third = teller.stream('Tell me a long story');
  let deltasRead = 0;
  for await (const event of third) {
    if (event.type !== 'text.delta') continue;
    write(event.delta);
    if (++deltasRead === 5) break; // cancels the run; the loop exits once it has ended
  }
  const { stopReason } = await third.result;
  write(`…\n  → run stopped: ${stopReason}; run.end fired ${runEnds} time(s) before the loop went on\n`);

  return {
    held: { shown: heldShown, final: heldFinal, eventsWithCard },
    retried: { retracted, shown: retriedShown, final: retriedFinal },
    stopped: { deltasRead, stopReason, runEnds },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
