// npx tsx examples/compaction.ts — a long, tool-heavy run kept under a budget, offline.
// The agent reads a manual page by page; with `compaction: { maxMessages: 8, keepRecent: 3 }`
// the older turns are folded into one summary message before the model call that would go
// over budget. A tool result is never parted from the call that asked for it.
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, type GenerateOptions, type GenerateResult, type Message, type ModelProvider, type RunResult, textOf } from 'koagent';
import { mockModel } from 'koagent/testing';

const PAGES = 6;

const readPage = defineTool({
  name: 'read_page',
  description: 'Reads one page of the manual',
  input: z.object({ page: z.number().int() }),
  execute: ({ page }) => `Page ${page}: step ${page} is to ${['unpack', 'charge', 'pair', 'calibrate', 'update', 'register'][page - 1]} the device.`,
});

// A summariser that really reads what it is given: it keeps the user's request and the steps
// it finds in the folded messages (an earlier summary included), as a model asked to "keep
// every fact" would.
function makeSummariser(): ModelProvider & { calls: number } {
  const summariser = {
    name: 'summariser',
    modelId: 'summariser',
    calls: 0,
    async generate(request: GenerateOptions): Promise<GenerateResult> {
      summariser.calls++;
      const text = request.messages.map((m) => m.content).join('\n');
      const asked = text.match(/The user asked: "([^"]*)"/)?.[1] ?? text.match(/^user: (.*)$/m)?.[1];
      const steps = [...new Set(text.match(/step \d+ is to \w+/g) ?? [])];
      const content = `The user asked: "${asked}" Read so far: ${steps.join('; ')}.`;
      return { message: { role: 'assistant', content }, usage: { inputTokens: Math.ceil(text.length / 4), outputTokens: Math.ceil(content.length / 4) }, finishReason: 'stop' };
    },
  };
  return summariser;
}

export interface CompactionDemo {
  compactions: { before: number; after: number; tokensBefore: number; tokensAfter: number }[];
  /** How many messages each model call was sent. */
  sent: number[];
  /** Every tool result in every transcript the model got had its call before it. */
  resultsWithTheirCalls: boolean;
  summary: string | undefined;
  result: RunResult;
}

const everyResultHasItsCall = (messages: readonly Message[]) => {
  const asked = new Set<string>();
  return messages.every((m) => {
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) asked.add(c.id);
    return m.role !== 'tool' || asked.has(m.toolCallId);
  });
};

export async function main(print: (line: string) => void = console.log): Promise<CompactionDemo> {
  const script = [
    ...Array.from({ length: PAGES }, (_, i) => ({ toolCalls: [{ name: 'read_page', args: { page: i + 1 } }] })),
    'To set it up: unpack, charge, pair, calibrate, update, register.',
  ];
  const model = mockModel(script);
  const summariser = makeSummariser();
  const compactions: CompactionDemo['compactions'] = [];
  const agent = createAgent({
    name: 'reader',
    instructions: 'You read manuals and sum them up.',
    model,
    tools: [readPage],
    compaction: { maxMessages: 8, keepRecent: 3, model: summariser },
    onEvent(event) {
      if (event.type === 'model.start' && event.purpose === 'turn') print(`model call ${event.step}`);
      if (event.type === 'tool.done') print(`  ${event.result}`);
      if (event.type === 'compaction.done') {
        const { before, after, tokensBefore, tokensAfter } = event;
        compactions.push({ before, after, tokensBefore, tokensAfter });
        print(`  [compaction] ${before} messages (~${tokensBefore} tokens) → ${after} (~${tokensAfter} tokens)`);
      }
    },
  });

  const result = await agent.run('How do I set up the device? Read the whole manual.');
  const sent = model.calls.map((call) => call.messages.length);
  const found = result.messages.find((m) => m.role === 'user' && textOf(m.content).startsWith('Summary of the earlier conversation:'));
  const summary = found === undefined ? undefined : textOf(found.content);
  print(`\nmessages sent per model call: ${sent.join(', ')} (never more than 8)`);
  print(`the summary now in the transcript:\n  ${summary?.replace('\n', '\n  ')}`);
  print(`the transcript the run ends with: ${result.messages.map((m) => m.role).join(', ')}`);
  const { modelCalls, totalTokens } = result.usage;
  print(`usage: ${modelCalls} model calls (${summariser.calls} of them summaries), ${totalTokens} tokens`);
  print(`answer: ${result.text}`);
  return { compactions, sent, resultsWithTheirCalls: model.calls.every((c) => everyResultHasItsCall(c.messages)), summary, result };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
