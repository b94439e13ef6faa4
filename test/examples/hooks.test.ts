import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cachedWeather } from '../../examples/hooks/cached-weather.js';
import { modelCallBudget } from '../../examples/hooks/end.js';
import { logTools } from '../../examples/hooks/log-tools.js';
import { maskEmails } from '../../examples/hooks/message.js';
import { shortMemory } from '../../examples/hooks/messages.js';
import { parsedInvoice } from '../../examples/hooks/output.js';
import { hookStateAcrossResume } from '../../examples/hooks/state.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/hooks: the two examples of the criogen Hook reference', () => {
  it('cached-weather: a ToolResult from beforeTool answers a city seen before, so the tool runs once per city', async () => {
    const { lookups, servedFromCache, answer } = await cachedWeather();
    expect(lookups).toEqual(['Lisbon', 'Bergen']);
    expect(servedFromCache).toBe(1);
    expect(answer).toBe('Lisbon: clear. Bergen: showers.');
  });

  it('log-tools: beforeTool logs each call and onEnd logs how the segment ended and the model calls made', async () => {
    const printed: string[] = [];
    const { lines } = await logTools((line) => printed.push(line));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('tool convert {"amount":20,"from":"EUR","to":"USD"}');
    expect(lines[1]).toMatch(/^segment of run_.{4}… completed; model calls so far: 2$/);
    expect(printed).toEqual(lines);
  });
});

describe('examples/hooks: one example per HookAction field', () => {
  it('state: the hook\'s notes survive a suspend, a trip through JSON and a resume by a new agent', async () => {
    const result = await hookStateAcrossResume();
    expect(result.status).toBe('suspended');
    expect(result.notesWhilePaused).toEqual({ replies: 2, tools: ['lookup', 'refund'] });
    expect(result.notesAtTheEnd).toEqual({ replies: 3, tools: ['lookup', 'refund'] });
    expect(result.answer).toBe('Order A-17 is refunded.');
  });

  it('messages: beforeModel sends and keeps a shortened transcript', async () => {
    const { sent, kept } = await shortMemory(3);
    expect(sent.map((m) => m.content)).toEqual(['You take drink orders.', '(2 earlier messages were left out)', 'Actually, make it tea.', 'Tea, then.', 'No sugar, please.']);
    expect(kept.slice(0, -1)).toEqual(sent);
    expect(kept.at(-1)).toEqual({ role: 'assistant', content: 'Noted: tea, no sugar.' });
  });

  it('message: afterModel replaces the reply, so no address reaches the caller or the transcript', async () => {
    const { answer, transcriptHasAddress } = await maskEmails();
    expect(answer).toBe('Write to [e-mail hidden] or to [e-mail hidden].');
    expect(transcriptHasAddress).toBe(false);
  });

  it('end: beforeModel ends the run once the budget of model calls is spent', async () => {
    const { stopReason, output, modelCalls, rolls } = await modelCallBudget(2);
    expect(stopReason).toBe('hook_end');
    expect(output).toBe('stopped: the budget of 2 model calls is spent');
    expect(modelCalls).toBe(2);
    expect(rolls).toBe(2);
  });

  it('output: afterModel ends the run with the parsed object as result.output', async () => {
    const { stopReason, output } = await parsedInvoice();
    expect(stopReason).toBe('hook_end');
    expect(output).toEqual({ vendor: 'Acme Paper', total: 129.5 });
  });
});

describe('examples/hooks: run directly', () => {
  it('each example runs offline with npx tsx and prints its story', async () => {
    // Seven tsx processes start at once: slow on a loaded machine, hence the long timeout.
    const names = ['cached-weather', 'log-tools', 'state', 'messages', 'message', 'end', 'output'];
    const outputs = await Promise.all(names.map((name) => promisify(execFile)(process.execPath, ['--import', 'tsx', `examples/hooks/${name}.ts`], { cwd: repo })));
    outputs.forEach(({ stdout }, i) => expect(stdout.trim(), names[i]).not.toBe(''));
    expect(outputs[0].stdout).toMatch(/the tool ran for: Lisbon, Bergen/);
    expect(outputs[6].stdout).toMatch(/vendor: Acme Paper, total: 129.5/);
  }, 120_000);
});
