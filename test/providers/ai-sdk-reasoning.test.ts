// The reasoning round trip: Anthropic requires the signed thinking block of a turn that called
// tools to come back, unchanged, before the tool_result. For real, with `@ai-sdk/anthropic`
// against a loopback Messages API server — in one run, streamed, and after a suspend → JSON →
// resume in another Node process — and with the AI SDK's MockLanguageModelV3 replying as that
// provider does.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdk } from '../../src/providers/ai-sdk.js';
import { ANSWER, anthropicModel, buildWeatherAgent, mockAnthropic, THINKING, TOOL_USE } from '../fixtures/reasoning-agent.js';
import { startAnthropicServer, type AnthropicServer, type AnthropicStep } from '../fixtures/anthropic-messages-server.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const child = fileURLToPath(new URL('../fixtures/reasoning-resume-child.ts', import.meta.url));

let server: AnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const serve = async (...steps: AnthropicStep[]) => (server = await startAnthropicServer(steps));

const thinkThenCall: AnthropicStep = { content: [THINKING, TOOL_USE] };
const answer: AnthropicStep = { content: [{ type: 'text', text: ANSWER }] };

/** Write a suspended state as JSON and resume it in a new Node process; what the child printed. */
async function resumeElsewhere(state: unknown, ...args: string[]): Promise<any> {
  const dir = mkdtempSync(join(tmpdir(), 'koagent-reasoning-'));
  try {
    const stateFile = join(dir, 'state.json');
    writeFileSync(stateFile, JSON.stringify(state));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', child, stateFile, ...args], { cwd: repo });
    const printed = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(printed.pid).not.toBe(process.pid);
    return printed;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the second request must hold: the user turn, the signed thinking block before the tool_use, then the tool_result. */
const continued = [
  { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
  { role: 'assistant', content: [{ type: 'thinking', thinking: THINKING.thinking, signature: THINKING.signature }, { type: 'tool_use', id: TOOL_USE.id, name: 'get_weather', input: { city: 'Paris' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: TOOL_USE.id, content: '{"city":"Paris","forecast":"sunny, 24°C"}' }] },
];

/** The reasoning part koagent keeps in the transcript for the thinking block. */
const reasoningPart = { type: 'reasoning', text: THINKING.thinking, providerOptions: { anthropic: { signature: THINKING.signature } } };

describe('aiSdk(anthropic): thinking across tool calls', () => {
  it('keeps the thinking block with its signature as a reasoning part, and sends it back before the tool_result', async () => {
    const s = await serve(thinkThenCall, answer);
    const result = await buildWeatherAgent(anthropicModel(s.baseURL)).run('Weather in Paris?');
    expect(result.text).toBe(ANSWER);
    expect(result.messages[1]).toEqual({ role: 'assistant', content: [reasoningPart], toolCalls: [{ id: TOOL_USE.id, name: 'get_weather', args: { city: 'Paris' } }] });
    expect(s.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(s.requests[0].body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(s.requests[1].body.messages).toEqual(continued);
  });

  it('does the same when streamed: the signature arrives last, as a signature_delta, and still lands on its part', async () => {
    const s = await serve(thinkThenCall, answer);
    const stream = buildWeatherAgent(anthropicModel(s.baseURL)).stream('Weather in Paris?');
    const reasoning: string[] = [];
    for await (const event of stream) if (event.type === 'reasoning.delta') reasoning.push(event.delta);
    const result = await stream.result;
    expect(result.text).toBe(ANSWER);
    expect(reasoning.join('')).toBe(THINKING.thinking);
    expect(result.messages[1]).toMatchObject({ content: [reasoningPart] });
    expect(s.requests[0].body.stream).toBe(true);
    expect(s.requests[1].body.messages).toEqual(continued);
  });

  it('sends redacted thinking back as it came, next to signed thinking', async () => {
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' } as const;
    const s = await serve({ content: [redacted, THINKING, TOOL_USE] }, answer, { content: [redacted, THINKING, TOOL_USE] }, answer);
    const whole = await buildWeatherAgent(anthropicModel(s.baseURL)).run('Weather in Paris?');
    expect(whole.messages[1].content).toEqual([{ type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: redacted.data } } }, reasoningPart]);
    const streamed = buildWeatherAgent(anthropicModel(s.baseURL)).stream('Weather in Paris?');
    for await (const _ of streamed);
    expect((await streamed.result).messages[1].content).toEqual(whole.messages[1].content);
    for (const request of [s.requests[1], s.requests[3]]) {
      expect(request.body.messages[1].content.slice(0, 2)).toEqual([redacted, { type: 'thinking', thinking: THINKING.thinking, signature: THINKING.signature }]);
    }
  });

  it('sends the thinking block back after a suspend, JSON and a resume in another Node process', async () => {
    const s = await serve(thinkThenCall, answer);
    const suspended = await buildWeatherAgent(anthropicModel(s.baseURL), { needsApproval: true }).run('Weather in Paris?');
    expect(suspended.status).toBe('suspended');
    expect(suspended.pendingApprovals).toMatchObject([{ toolCallId: TOOL_USE.id, toolName: 'get_weather' }]);
    const resumed = await resumeElsewhere(suspended.state, 'anthropic', s.baseURL);
    expect(resumed).toMatchObject({ status: 'completed', text: ANSWER });
    expect(resumed.messages[1].content).toEqual([reasoningPart]);
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1].body.messages).toEqual(continued);
  });
});

describe('aiSdk(MockLanguageModelV3): an Anthropic-style reasoning round trip', () => {
  /** The prompt of the call after the tool ran: the reasoning part with its metadata, before the call. */
  const prompt = [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
    { role: 'assistant', content: [
      { type: 'reasoning', text: THINKING.thinking, providerOptions: { anthropic: { signature: THINKING.signature } } },
      { type: 'tool-call', toolCallId: TOOL_USE.id, toolName: 'get_weather', input: { city: 'Paris' } },
    ] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: TOOL_USE.id, toolName: 'get_weather', output: { type: 'text', value: '{"city":"Paris","forecast":"sunny, 24°C"}' } }] },
  ];

  it('sends the reasoning part with its provider metadata back on the next call', async () => {
    const model = mockAnthropic();
    const result = await buildWeatherAgent(aiSdk(model)).run('Weather in Paris?');
    expect(result.text).toBe(ANSWER);
    expect(model.doGenerateCalls[1].prompt).toEqual(prompt);
  });

  it('does so after a suspend, JSON and a resume in another Node process', async () => {
    const model = mockAnthropic();
    const suspended = await buildWeatherAgent(aiSdk(model), { needsApproval: true }).run('Weather in Paris?');
    expect(suspended.status).toBe('suspended');
    expect(model.doGenerateCalls).toHaveLength(1);
    const resumed = await resumeElsewhere(suspended.state, 'mock');
    expect(resumed).toMatchObject({ status: 'completed', text: ANSWER });
    expect(resumed.prompts).toEqual([prompt]);
  });
});
