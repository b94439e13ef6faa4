// The provider examples run offline (against a loopback server, and say so), and `npm start`
// picks a real model when KOAGENT_MODEL names one. Each runs as its own Node process.
import { afterEach, describe, expect, it } from 'vitest';
import { openaiCompatibleServer, type OpenAICompatibleServer } from '../../src/testing/index.js';
import { runExample as run } from '../support/examples.js';

/** The environment of a machine with no model configured. */
function offlineEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const key of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'KOAGENT_MODEL', 'OLLAMA_BASE_URL']) if (!(key in extra)) delete env[key];
  return env;
}

let server: OpenAICompatibleServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('examples/openai.ts and examples/ai-sdk.ts without a key', () => {
  it('openai.ts runs a tool call and a streamed reply against the loopback server, and says so', async () => {
    const { code, stdout, stderr } = await run('examples/openai.ts', { env: offlineEnv() });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^No OPENAI_API_KEY: talking to a scripted Chat Completions server at http:\/\/127\.0\.0\.1:\d+\/v1/);
    expect(stdout).toContain('tool calls: get_weather({"city":"Paris"})');
    expect(stdout).toContain('answer: Paris is sunny today, 24°C.');
    expect(stdout).toContain('streamed: Sunny skies over the Seine — café weather, ça va!');
  });

  it('ai-sdk.ts runs the AI SDK\'s OpenAI provider through the adapter against the loopback server, and says so', async () => {
    const { code, stdout, stderr } = await run('examples/ai-sdk.ts', { env: offlineEnv() });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^No OPENAI_API_KEY: the AI SDK provider talks to a scripted Chat Completions server/);
    expect(stdout).toContain('tool calls: convert_currency({"amount":50,"from":"EUR","to":"USD"})');
    expect(stdout).toContain('answer: 50 EUR is about 54 USD.');
  });
});

describe('npm start (examples/main.ts) chooses its model from the environment', () => {
  it('uses the scripted mockModel when KOAGENT_MODEL is not set, and says how to use a real one', async () => {
    const { code, stdout } = await run('examples/main.ts', { env: offlineEnv() });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^model: scripted mockModel \(set KOAGENT_MODEL=openai:gpt-5-mini and OPENAI_API_KEY to use a real one\)/);
  });

  it('uses the model KOAGENT_MODEL names, over HTTP', async () => {
    server = await openaiCompatibleServer({ responses: [
      { reply: { toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }] } },
      { reply: { text: 'Paris is sunny, said the real model.' } },
    ] });
    const { code, stdout } = await run('examples/main.ts', { env: offlineEnv({ KOAGENT_MODEL: 'openai:gpt-5-mini', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL }) });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^model: openai:gpt-5-mini \(from KOAGENT_MODEL\)/);
    expect(stdout).toContain('answer: Paris is sunny, said the real model.');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-test');
  });

  it('fails at once, naming OPENAI_API_KEY, when KOAGENT_MODEL names OpenAI without a key', async () => {
    const { code, stderr } = await run('examples/main.ts', { env: offlineEnv({ KOAGENT_MODEL: 'openai:gpt-5-mini' }) });
    expect(code).not.toBe(0);
    expect(stderr).toContain('createAgent: model "openai:gpt-5-mini": OPENAI_API_KEY is not set');
  });
});
