// The reasoning round trip: Anthropic requires the signed thinking block of a turn that called
// tools to come back, unchanged, before the tool_result. For real, with `@ai-sdk/anthropic`
// against a loopback Messages API server — in one run and streamed — and with the AI SDK's
// MockLanguageModelV3 replying as that provider does. (After a suspend → JSON → resume in another
// Node process: ai-sdk-reasoning-processes.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdk } from '../../src/providers/ai-sdk.js';
import { ANSWER, anthropicModel, buildWeatherAgent, CONTINUED, MOCK_PROMPT, mockAnthropic, REASONING_PART, THINKING, TOOL_USE } from '../fixtures/reasoning-agent.js';
import { startAnthropicServer, type AnthropicServer, type AnthropicStep } from '../fixtures/anthropic-messages-server.js';

let server: AnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const serve = async (...steps: AnthropicStep[]) => (server = await startAnthropicServer(steps));

const thinkThenCall: AnthropicStep = { content: [THINKING, TOOL_USE] };
const answer: AnthropicStep = { content: [{ type: 'text', text: ANSWER }] };

describe('aiSdk(anthropic): thinking across tool calls', () => {
  it('keeps the thinking block with its signature as a reasoning part, and sends it back before the tool_result', async () => {
    const s = await serve(thinkThenCall, answer);
    const result = await buildWeatherAgent(anthropicModel(s.baseURL)).run('Weather in Paris?');
    expect(result.text).toBe(ANSWER);
    expect(result.messages[1]).toEqual({ role: 'assistant', content: [REASONING_PART], toolCalls: [{ id: TOOL_USE.id, name: 'get_weather', args: { city: 'Paris' } }] });
    expect(s.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(s.requests[0].body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(s.requests[1].body.messages).toEqual(CONTINUED);
  });

  it('does the same when streamed: the signature arrives last, as a signature_delta, and still lands on its part', async () => {
    const s = await serve(thinkThenCall, answer);
    const stream = buildWeatherAgent(anthropicModel(s.baseURL)).stream('Weather in Paris?');
    const reasoning: string[] = [];
    for await (const event of stream) if (event.type === 'reasoning.delta') reasoning.push(event.delta);
    const result = await stream.result;
    expect(result.text).toBe(ANSWER);
    expect(reasoning.join('')).toBe(THINKING.thinking);
    expect(result.messages[1]).toMatchObject({ content: [REASONING_PART] });
    expect(s.requests[0].body.stream).toBe(true);
    expect(s.requests[1].body.messages).toEqual(CONTINUED);
  });

  it('sends redacted thinking back as it came, next to signed thinking', async () => {
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' } as const;
    const s = await serve({ content: [redacted, THINKING, TOOL_USE] }, answer, { content: [redacted, THINKING, TOOL_USE] }, answer);
    const whole = await buildWeatherAgent(anthropicModel(s.baseURL)).run('Weather in Paris?');
    expect(whole.messages[1].content).toEqual([{ type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: redacted.data } } }, REASONING_PART]);
    const streamed = buildWeatherAgent(anthropicModel(s.baseURL)).stream('Weather in Paris?');
    for await (const _ of streamed);
    expect((await streamed.result).messages[1].content).toEqual(whole.messages[1].content);
    for (const request of [s.requests[1], s.requests[3]]) {
      expect(request.body.messages[1].content.slice(0, 2)).toEqual([redacted, { type: 'thinking', thinking: THINKING.thinking, signature: THINKING.signature }]);
    }
  });

});

describe('aiSdk(MockLanguageModelV3): an Anthropic-style reasoning round trip', () => {
  it('sends the reasoning part with its provider metadata back on the next call', async () => {
    const model = mockAnthropic();
    const result = await buildWeatherAgent(aiSdk(model)).run('Weather in Paris?');
    expect(result.text).toBe(ANSWER);
    expect(model.doGenerateCalls[1].prompt).toEqual(MOCK_PROMPT);
  });

});
