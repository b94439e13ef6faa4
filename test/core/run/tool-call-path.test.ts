// One tool call's path, from the provider's reply to its result in the transcript, crosses a
// dozen files of koagent at most (docs/design.md draws them). V8's precise coverage counts the
// functions that ran between the two points, in this process: the files they are in are the path.
import { Session } from 'node:inspector';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type GenerateResult } from '../../../src/index.js';
import { reply } from '../../support/core.js';

interface Coverage { result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[] }

/** The files of src/ whose functions ran since the last call (the inspector answers at once, in this thread). */
function filesRun(session: Session): Map<string, string[]> {
  let taken: Coverage | undefined;
  session.post('Profiler.takePreciseCoverage', (error, answer) => {
    if (error) throw error;
    taken = answer as Coverage;
  });
  const files = new Map<string, string[]>();
  for (const script of taken!.result) {
    const at = script.url.indexOf('/src/');
    if (at === -1 || script.url.includes('node_modules')) continue;
    const ran = script.functions.filter((fn) => fn.ranges[0].count > 0).map((fn) => fn.functionName);
    if (ran.length > 0) files.set(script.url.slice(at + 1).replace(/\?.*$/, ''), ran);
  }
  return files;
}

describe('one tool call\'s path', () => {
  it('crosses at most 12 files from the provider\'s reply to the tool\'s result in the transcript', async () => {
    const session = new Session();
    session.connect();
    session.post('Profiler.enable');
    session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    let path: Map<string, string[]> | undefined;
    let replies = 0;
    const model = {
      name: 'scripted',
      generate: async (): Promise<GenerateResult> => {
        if (++replies > 1) return reply('Done.');
        filesRun(session); // the window opens: counts so far are dropped
        return reply('', [{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }]);
      },
    };
    // The run's stop condition is asked once the tool's result is in the transcript: the window closes there.
    const stopWhen = ({ messages }: { messages: readonly { role: string }[] }) => {
      if (path === undefined && messages.at(-1)?.role === 'tool') path = filesRun(session);
      return false;
    };
    const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
    const result = await createAgent({ model, tools: [add], stopWhen }).run('1 + 2?');
    session.disconnect();
    expect(result.text).toBe('Done.');
    // What asks the stop conditions (the segment, the step limits) is past the transcript: not the call's path.
    path!.delete('src/features/limits.ts');
    const segment = path!.get('src/core/run/segment.ts')?.filter((fn) => !['stopReason', 'firstStop'].includes(fn));
    if (segment?.length === 0) path!.delete('src/core/run/segment.ts');
    const files = [...path!].map(([file, fns]) => `${file}: ${fns.join(', ')}`).sort();
    expect(files.length, files.join('\n')).toBeLessThanOrEqual(12);
  });
});
