// piiRedactionMiddleware: what its detectors find (and leave alone), how each mode rewrites,
// each target (input, reply, tool arguments, tool results), and the promise it makes: the raw
// value reaches no event, span, state or store — checked against a real SQLite file's bytes.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool, type AgentEvent, type RunState } from '../../src/index.js';
import { piiRedactionMiddleware } from '../../src/middleware.js';
import { sqliteStore } from '../../src/sqlite.js';
import { mockModel } from '../../src/testing/index.js';
import { toolMessages } from '../support/core.js';

const EMAIL = 'jane.doe@example.com';
const CARD = '4111 1111 1111 1111';
const KEY = 'sk-proj-Q3x9LmT2vB8nR4kW7pZ1aY6c';

const dir = mkdtempSync(join(tmpdir(), 'koagent-pii-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lookup = (seen: unknown[] = []) => defineTool({
  name: 'lookup',
  description: 'Find a customer',
  input: z.object({ email: z.string() }),
  execute: ({ email }) => {
    seen.push(email);
    return { email, card: CARD, note: `key ${KEY}` };
  },
});

describe('piiRedactionMiddleware: the built-in detectors', () => {
  const redact = piiRedactionMiddleware({ detectors: ['email', 'phone', 'creditCard', 'iban', 'ip', 'secret', 'highEntropy'] }).redact;

  it.each([
    ['an e-mail address', `write to ${EMAIL}.`, 'write to [EMAIL].'],
    ['a phone number, international or with an area code', 'call +44 20 7946 0958 or (555) 123-4567.', 'call [PHONE] or [PHONE].'],
    ['a card number that passes Luhn, with spaces or dashes', `pay with ${CARD} or 5500-0000-0000-0004`, 'pay with [CREDIT_CARD] or [CREDIT_CARD]'],
    ['an IBAN that passes mod-97', 'IBAN DE89 3704 0044 0532 0130 00 or GB82WEST12345698765432', 'IBAN [IBAN] or [IBAN]'],
    ['IPv4 and IPv6 addresses', 'from 192.168.1.20 and 2001:db8::8a2e:370:7334', 'from [IP] and [IP]'],
    ['API keys and tokens of the known forms', `${KEY} AKIAIOSFODNN7EXAMPLE ghp_abcdefghijklmnopqrstuvwxyz0123456789AB`, '[SECRET] [SECRET] [SECRET]'],
    ['a private key block', 'key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----', 'key:\n[SECRET]'],
    ['a long high-entropy token (when asked for)', 'token Zx9Qm2Lp8Rt4Vb6Nc1Kd3Hf5Jg7Sa0We', 'token [HIGH_ENTROPY]'],
  ])('finds %s', (_what, text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  it.each([
    ['a card number that fails Luhn', '4111 1111 1111 1112'],
    ['an IBAN whose check digits are wrong', 'DE89 3704 0044 0532 0130 01'],
    ['dates, times and short numbers', 'on 2024-01-15 at 12:30:00, order 12345'],
    ['a hex digest (one case only, low entropy)', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
    ['an address that is not IPv4', '999.1.1.1'],
  ])('leaves %s alone', (_what, text) => {
    expect(redact(text)).toBe(text);
  });

  it('leaves long tokens alone by default (base64 data looks like them)', () => {
    expect(piiRedactionMiddleware().redact('Zx9Qm2Lp8Rt4Vb6Nc1Kd3Hf5Jg7Sa0We')).toBe('Zx9Qm2Lp8Rt4Vb6Nc1Kd3Hf5Jg7Sa0We');
  });

  it('runs custom patterns and functions beside the built-in ones, which they win over', () => {
    const { redact: custom } = piiRedactionMiddleware({ custom: [{ name: 'employeeId', pattern: /\bEMP-\d{6}\b/ }, { name: 'codename', detect: (text) => (text.includes('Bluebird') ? ['Bluebird'] : []) }] });
    expect(custom(`EMP-123456 runs Bluebird, mail ${EMAIL}`)).toBe('[EMPLOYEE_ID] runs [CODENAME], mail [EMAIL]');
  });
});

describe('piiRedactionMiddleware: modes', () => {
  it("masks partially with mask: 'partial', or as a function says", () => {
    expect(piiRedactionMiddleware({ mask: 'partial' }).redact(`${EMAIL} ${CARD}`)).toBe('j***@example.com **** **** **** 1111');
    expect(piiRedactionMiddleware({ mask: (value, detector) => `<${detector}:${value.length}>` }).redact(EMAIL)).toBe('<email:20>');
  });

  it('hashes to a token that is the same for the same value and salt, in every instance, and differs with another salt', () => {
    const a = piiRedactionMiddleware({ mode: 'hash', salt: 'pepper' });
    const b = piiRedactionMiddleware({ mode: 'hash', salt: 'pepper' });
    const token = a.redact(EMAIL);
    expect(token).toMatch(/^\[EMAIL:[0-9a-f]{12}\]$/);
    // Spellings of one value share a token: case of an e-mail, separators of a card number.
    expect(b.redact(EMAIL.toUpperCase())).toBe(token);
    expect(a.redact('4111-1111-1111-1111')).toBe(a.redact(CARD));
    expect(piiRedactionMiddleware({ mode: 'hash', salt: 'salt' }).redact(EMAIL)).not.toBe(token);
  });

  it('refuses hash without a salt, a misspelled option and a mode for a detector not in use', () => {
    expect(() => piiRedactionMiddleware({ mode: 'hash' })).toThrow(/needs a salt/);
    expect(() => piiRedactionMiddleware({ detector: ['email'] } as never)).toThrow('piiRedactionMiddleware: detector is not a PII redaction option; did you mean `detectors`?');
    expect(() => piiRedactionMiddleware({ detectors: ['email'], modes: { phone: 'block' } })).toThrow(/modes.phone names no detector in use/);
    expect(() => piiRedactionMiddleware({ mode: 'erase' as never })).toThrow(/must be 'mask', 'hash' or 'block'/);
  });
});

describe('piiRedactionMiddleware: user input', () => {
  it('redacts the input before the model, the transcript or the result sees it', async () => {
    const model = mockModel(['Noted.']);
    const result = await createAgent({ model, middleware: [piiRedactionMiddleware()] }).run(`My card is ${CARD}`);
    expect(model.calls[0].messages.at(-1)).toEqual({ role: 'user', content: 'My card is [CREDIT_CARD]' });
    expect(JSON.stringify(result.state)).not.toContain('4111');
    expect(result.usage.piiRedactions).toBe(1);
  });

  it('in block mode, ends the run with stop:pii before the model is called, keeping only the masked input', async () => {
    const model = mockModel(['never']);
    const result = await createAgent({ model, middleware: [piiRedactionMiddleware({ modes: { secret: 'block' } })] }).run(`Use my key ${KEY}`);
    expect(result.stopReason).toBe('stop:pii');
    expect(result.output).toEqual({ blocked: 'pii', target: 'input', detectors: ['secret'] });
    expect(model.calls).toHaveLength(0);
    expect(result.messages.at(-1)).toEqual({ role: 'user', content: 'Use my key [SECRET]' });
  });

  it('redacts the input of a session turn (send) too', async () => {
    const agent = createAgent({ model: mockModel(['One.', 'Two.']), middleware: [piiRedactionMiddleware()] });
    await agent.send('Hello');
    const second = await agent.send(`Mail ${EMAIL}`);
    expect(second.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Hello', 'Mail [EMAIL]']);
  });
});

describe('piiRedactionMiddleware: model output', () => {
  it('redacts the reply before the transcript keeps it', async () => {
    const result = await createAgent({ model: mockModel([`Her address is ${EMAIL}.`]), middleware: [piiRedactionMiddleware()] }).run('Who?');
    expect(result.text).toBe('Her address is [EMAIL].');
  });

  it('streams no delta with the raw value: the text is held until it is redacted', async () => {
    const agent = createAgent({ model: mockModel([`Card ${CARD} and mail ${EMAIL} are on file.`], { streamChunk: 3 }), middleware: [piiRedactionMiddleware()] });
    const deltas: string[] = [];
    const stream = agent.stream('Which card?');
    for await (const event of stream) if (event.type === 'text.delta') deltas.push(event.delta);
    expect(deltas.join('')).toBe('Card [CREDIT_CARD] and mail [EMAIL] are on file.');
    for (const delta of deltas) expect(delta).not.toMatch(/4111|jane/);
  });

  it('in block mode, ends the run with stop:pii and keeps none of the reply', async () => {
    const result = await createAgent({ model: mockModel([`The key is ${KEY}`]), middleware: [piiRedactionMiddleware({ modes: { secret: 'block' } })] }).run('Key?');
    expect(result.stopReason).toBe('stop:pii');
    expect(result.output).toMatchObject({ target: 'output', detectors: ['secret'] });
    expect(JSON.stringify(result.state)).not.toContain('sk-proj');
  });
});

describe('piiRedactionMiddleware: tool arguments', () => {
  it('redacts the arguments the transcript keeps; the tool gets them redacted too', async () => {
    const seen: string[] = [];
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { email: EMAIL }, id: 'c1' }] }, 'Done.']);
    const result = await createAgent({ model, tools: [lookup(seen)], middleware: [piiRedactionMiddleware({ targets: ['toolArgs'] })] }).run('Find her');
    expect(seen).toEqual(['[EMAIL]']);
    expect(result.messages.find((m) => m.role === 'assistant')).toMatchObject({ toolCalls: [{ id: 'c1', args: { email: '[EMAIL]' } }] });
  });

  it('in block mode, denies the call without running it, and the refusal survives suspend → JSON → resume', async () => {
    const seen: string[] = [];
    const approve = defineTool({ name: 'approve', description: 'Needs a human', input: z.object({}), needsApproval: true, execute: () => 'approved' });
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { email: EMAIL }, id: 'c1' }, { name: 'approve', args: {}, id: 'c2' }] }, 'Done.']);
    const make = () => createAgent({ model, tools: [lookup(seen), approve], middleware: [piiRedactionMiddleware({ mode: 'block', targets: ['toolArgs'] })] });
    const paused = await make().run('Find her');
    expect(paused.status).toBe('suspended');
    const state = JSON.parse(JSON.stringify(paused.state)) as RunState;
    expect(state.hookState['pii-redaction']).toEqual({ blockedCalls: ['c1'] });
    expect(JSON.stringify(state)).not.toContain(EMAIL);
    const done = await make().resume(state, { c2: true });
    expect(done.status).toBe('completed');
    expect(seen).toEqual([]);
    const results = toolMessages(done.messages);
    expect(results.find((m) => m.toolCallId === 'c1')?.metadata?.error).toMatchObject({ kind: 'denied', message: expect.stringContaining('held personal data') });
    expect(results.find((m) => m.toolCallId === 'c2')?.content).toBe('approved');
  });
});

describe('piiRedactionMiddleware: tool results', () => {
  it('redacts the result before the model reads it', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { email: 'x' } }] }, 'Done.']);
    await createAgent({ model, tools: [lookup()], middleware: [piiRedactionMiddleware({ targets: ['toolResults'] })] }).run('Find her');
    const read = model.calls[1].messages.at(-1);
    expect(read).toMatchObject({ role: 'tool', content: JSON.stringify({ email: 'x', card: '[CREDIT_CARD]', note: 'key [SECRET]' }) });
  });

  it('in block mode, withholds the result as a guardrail error', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'lookup', args: { email: 'x' } }] }, 'Done.']);
    const result = await createAgent({ model, tools: [lookup()], middleware: [piiRedactionMiddleware({ modes: { creditCard: 'block' }, targets: ['toolResults'] })] }).run('Find her');
    expect(toolMessages(result.messages)[0].metadata?.error).toMatchObject({ kind: 'guardrail', message: expect.stringContaining('creditCard') });
    expect(JSON.stringify(result.state)).not.toContain('4111');
  });
});

describe('piiRedactionMiddleware: the raw value reaches no event, span, state or store', () => {
  it('across input, reply, tool arguments and tool results, in a traced (spans and the layer trace), stored, streamed run', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const path = join(dir, 'runs.db');
    const store = sqliteStore({ path });
    const events: AgentEvent[] = [];
    const failing = defineTool({ name: 'notify', description: 'Notify', input: z.object({ to: z.string() }), execute: ({ to }) => { throw new Error(`no mailbox for ${EMAIL} (${to})`); } });
    const model = mockModel([
      { toolCalls: [{ name: 'lookup', args: { email: EMAIL } }, { name: 'notify', args: { to: EMAIL } }] },
      `Found ${EMAIL}, card ${CARD}, key ${KEY}.`,
    ]);
    const reports: unknown[] = [];
    const fileHolds = (when: string) => {
      const files = readdirSync(dir).filter((f) => f.startsWith('runs.db'));
      expect(files).toContain('runs.db');
      for (const file of files) {
        const bytes = readFileSync(join(dir, file));
        for (const raw of [EMAIL, '4111 1111 1111 1111', KEY]) expect(bytes.includes(Buffer.from(raw)), `${raw} in ${file} ${when}`).toBe(false);
      }
    };
    // The layer trace records each layer's changes; the redaction's, and those inside it, without their values.
    const agent = createAgent({ model, tools: [lookup(), failing], store, layerTrace: true, onEvent: (e) => events.push(e), middleware: [piiRedactionMiddleware({ onRedact: (r) => reports.push(r) })] });
    try {
      const stream = agent.stream(`Customer ${EMAIL} paid with ${CARD}; use ${KEY}`);
      for await (const event of stream) events.push(event);
      const result = await stream.result;
      expect(result.text).toBe('Found [EMAIL], card [CREDIT_CARD], key [SECRET].');
      const stored = await store.loadRun(result.runId);
      const haystacks = {
        events: JSON.stringify(events),
        spans: JSON.stringify(exporter.getFinishedSpans().map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events }))),
        state: JSON.stringify(result.state),
        stored: JSON.stringify(stored),
        reports: JSON.stringify(reports),
      };
      expect(exporter.getFinishedSpans().length).toBeGreaterThan(3);
      expect(haystacks.state).toContain('"type":"replaced-result"');
      expect(haystacks.stored).toContain('[CREDIT_CARD]');
      for (const [where, text] of Object.entries(haystacks)) {
        for (const raw of [EMAIL, 'jane.doe', '4111 1111', KEY]) expect(text.includes(raw), `${raw} in ${where}`).toBe(false);
      }
      // The file's bytes with its write-ahead log, while the store is open: the value was never
      // written, so no log frame or free page holds it (a run layer would be too late for this).
      fileHolds('while open');
    } finally {
      await store.close();
      trace.disable();
    }
    // And after closing, when the journal has been folded into the file.
    fileHolds('after close');
  });
});
