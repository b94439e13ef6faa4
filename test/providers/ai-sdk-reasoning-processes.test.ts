// The reasoning round trip (ai-sdk-reasoning.test.ts) after a suspend → JSON → resume in another
// Node process (test/fixtures/reasoning-resume-child.ts): the signed thinking block still comes
// back before the tool_result, with `@ai-sdk/anthropic` against a loopback Messages API server and
// with the AI SDK's MockLanguageModelV3.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdk } from '../../src/providers/ai-sdk.js';
import { ANSWER, anthropicModel, buildWeatherAgent, CONTINUED, MOCK_PROMPT, mockAnthropic, REASONING_PART, THINKING, TOOL_USE } from '../fixtures/reasoning-agent.js';
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

describe('aiSdk(anthropic): thinking across tool calls', () => {
  it('sends the thinking block back after a suspend, JSON and a resume in another Node process', async () => {
    const s = await serve(thinkThenCall, answer);
    const suspended = await buildWeatherAgent(anthropicModel(s.baseURL), { needsApproval: true }).run('Weather in Paris?');
    expect(suspended.status).toBe('suspended');
    expect(suspended.pendingApprovals).toMatchObject([{ toolCallId: TOOL_USE.id, toolName: 'get_weather' }]);
    const resumed = await resumeElsewhere(suspended.state, 'anthropic', s.baseURL);
    expect(resumed).toMatchObject({ status: 'completed', text: ANSWER });
    expect(resumed.messages[1].content).toEqual([REASONING_PART]);
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1].body.messages).toEqual(CONTINUED);
  });
});

describe('aiSdk(MockLanguageModelV3): an Anthropic-style reasoning round trip', () => {
  it('sends the reasoning part with its provider metadata back after a suspend, JSON and a resume in another Node process', async () => {
    const model = mockAnthropic();
    const suspended = await buildWeatherAgent(aiSdk(model), { needsApproval: true }).run('Weather in Paris?');
    expect(suspended.status).toBe('suspended');
    expect(model.doGenerateCalls).toHaveLength(1);
    const resumed = await resumeElsewhere(suspended.state, 'mock');
    expect(resumed).toMatchObject({ status: 'completed', text: ANSWER });
    expect(resumed.prompts).toEqual([MOCK_PROMPT]);
  });
});
