// The agent of the fork and replay tests: a multi-tool run (one call in step 1, two in step 2,
// one in step 3, an answer in step 4) whose tool notes each effect in a file, so a test counts
// what ran; a model that answers from the transcript (any process, any fork, gets the reply for
// where the run stands); a layer that counts the turns in the run's hook state.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { createAgent, defineTool, type Middleware } from '../../src/index.js';
import type { RunStore } from '../../src/store.js';
import { mockModel, type MockModel, type MockReply } from '../../src/testing/index.js';

export const SCRIPT: MockReply[] = [
  { toolCalls: [{ id: 'c1', name: 'note', args: { text: 'one' } }] },
  { toolCalls: [{ id: 'c2', name: 'note', args: { text: 'two' } }, { id: 'c3', name: 'note', args: { text: 'three' } }] },
  { toolCalls: [{ id: 'c4', name: 'note', args: { text: 'four' } }] },
  'Noted four things.',
];

/** The texts noted in `file` so far, in order. */
export function effects(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** A tool whose every run is an effect, noted in `file`. */
export function noteTool(file: string) {
  return defineTool({
    name: 'note',
    description: 'Notes a text',
    input: z.object({ text: z.string() }),
    execute: ({ text }) => {
      appendFileSync(file, `${text}\n`);
      return { noted: text };
    },
  });
}

/** Counts the run's turns in its hook state (`turns`): a layer's own state, kept with the run. */
export const turnCounter: Middleware = {
  name: 'turn-counter',
  model: (ctx, next) => {
    ctx.setHookState('turns', ((ctx.state.hookState.turns as number | undefined) ?? 0) + 1);
    return next();
  },
};

/** The agent, noting into `file`, on `store` (if given); its model is returned too, to count its calls. */
export function notingAgent(file: string, options: { store?: RunStore; layerTrace?: boolean; middleware?: Middleware[]; model?: MockModel } = {}) {
  const model = options.model ?? mockModel(SCRIPT, { resumable: true });
  const agent = createAgent({
    name: 'noter',
    instructions: 'Note what you are asked to.',
    model,
    tools: [noteTool(file)],
    middleware: [turnCounter, ...(options.middleware ?? [])],
    layerTrace: options.layerTrace ?? true,
    ...(options.store === undefined ? {} : { store: options.store }),
  });
  return { agent, model };
}
