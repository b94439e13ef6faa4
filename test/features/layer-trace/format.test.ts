// formatTrace (koagent/trace): a run's layer trace as text for a terminal, what `koagent runs
// show` prints: each call a line, its layers an indented onion under it, each with what it did.
import { describe, expect, it } from 'vitest';
import { createAgent, deny, type Middleware } from '../../../src/index.js';
import { mockModel } from '../../../src/testing/index.js';
import { formatTrace, traceOf } from '../../../src/trace.js';
import { search } from './support.js';

const lang: Middleware = { name: 'lang', tool: (ctx, next) => { ctx.args = { q: `${(ctx.args as { q: string }).q} lang:en` }; return next(); } };
const noSecrets: Middleware = { name: 'no-secrets', tool: (ctx, next) => ((ctx.args as { q: string }).q.includes('secret') ? deny('No secrets') : next()) };
/** The text with every duration written as `… ms`: the times differ from run to run, the shape does not. */
const shape = (text: string) => text.replace(/\d+(?:\.\d+)? ms/g, '… ms');

async function tracedRun() {
  const model = mockModel([{ toolCalls: [{ name: 'search', args: { q: 'cats' }, id: 'c1' }, { name: 'search', args: { q: 'secret plans' }, id: 'c2' }] }, 'Done.']);
  return createAgent({ name: 'finder', model, tools: [search], middleware: [noSecrets, lang], layerTrace: true }).run('Find cats');
}

describe('formatTrace', () => {
  it('prints each segment, then each call it made and its layers as an onion, each one step in from the layer around it, with what it did', async () => {
    const result = await tracedRun();
    expect(shape(formatTrace(result.state))).toBe([
      'run segment 1  completed  … ms  no run layers',
      'model turn [mock] model:1:1  step 1, segment 1  ok  … ms',
      'tool search c1  step 1, segment 1  ok  … ms',
      '  koagent:validate (builtin)  self … ms, out at … ms',
      '    no-secrets  self … ms, out at … ms',
      '      lang  self … ms, out at … ms',
      '        · rewrote-args: /args/q "cats" → "cats lang:en"',
      '        koagent:resolve (builtin)  self … ms, out at … ms',
      'tool search c2  step 1, segment 1  denied  … ms',
      '  koagent:validate (builtin)  self … ms, out at … ms',
      '    no-secrets  self … ms, out at … ms',
      '      · short-circuit: settled the call without next()',
      '      · denied by no-secrets: No secrets',
      'model turn [mock] model:2:1  step 2, segment 1  ok  … ms',
    ].join('\n'));
  });

  it('prints the same from the record alone', async () => {
    const result = await tracedRun();
    expect(formatTrace(traceOf(result.state)!)).toBe(formatTrace(result.state));
  });

  it('shows a sub-agent\'s calls inside the call of its lead, one step further in', async () => {
    const researcher = createAgent({ name: 'researcher', model: mockModel([{ toolCalls: [{ name: 'search', args: { q: 'otters' }, id: 's1' }] }, 'Otters hold hands.']), tools: [search] });
    const lead = createAgent({ name: 'lead', model: mockModel([{ toolCalls: [{ name: 'researcher', args: { task: 'otters' }, id: 'r1' }] }, 'Done.']), tools: [researcher.asTool({ description: 'Researches' })], layerTrace: true });
    const text = formatTrace((await lead.run('Otters?')).state);
    expect(shape(text).split('\n').slice(4, 7)).toEqual([
      'model turn [mock] model:1:1  step 1, segment 1  ok  … ms  inside r1 (researcher)',
      'tool search s1  step 1, segment 1  ok  … ms  inside r1 (researcher)',
      '    koagent:validate (builtin)  self … ms, out at … ms',
    ]);
  });

  it('says so for a run recorded without the trace', async () => {
    const result = await createAgent({ model: mockModel(['Hi.']) }).run('Hi');
    expect(formatTrace(result.state)).toBe('not recorded (run with layerTrace: true)');
  });

  it('refuses what is neither a run state nor a record, and says to pass result.state for a run result', async () => {
    const result = await tracedRun();
    expect(() => formatTrace(result as never)).toThrow(new TypeError('formatTrace(stateOrRecord): expected a run state or a layer trace record, got an object with keys runId, sessionId, status, stopReason, text, output (this is a run result: pass result.state)'));
    expect(() => formatTrace(undefined as never)).toThrow('formatTrace(stateOrRecord): expected a run state or a layer trace record, got undefined');
  });
});
