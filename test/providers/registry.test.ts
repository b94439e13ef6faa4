import { inspect } from 'node:util';
// Model strings: `model: 'openai:gpt-5-mini'` resolves to a provider at construction, reading
// the environment; a bad string, an unknown prefix or a missing key fails there, saying what to set.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAgent, registerModelPrefix, resolveModel, type ModelProvider } from '../../src/index.js';
import type { OpenAIChatModel } from '../../src/providers/openai.js';
import { modelPrefixes } from '../../src/providers/registry.js';
import { openaiCompatibleServer, type OpenAICompatibleServer } from '../../src/testing/index.js';

let server: OpenAICompatibleServer | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

describe('openai: prefix', () => {
  it('runs an agent given only a model string, with OPENAI_BASE_URL and OPENAI_API_KEY from the environment', async () => {
    server = await openaiCompatibleServer({ responses: [{ reply: { text: 'Hello from the server.' } }] });
    vi.stubEnv('OPENAI_API_KEY', 'sk-env');
    vi.stubEnv('OPENAI_BASE_URL', server.baseURL);
    const result = await createAgent({ model: 'openai:gpt-5-mini' }).run('Hi');
    expect(result.text).toBe('Hello from the server.');
    expect(server.requests[0].body.model).toBe('gpt-5-mini');
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-env');
  });

  it('goes to api.openai.com when OPENAI_BASE_URL is not set', () => {
    const model = resolveModel('openai:gpt-5-mini', { OPENAI_API_KEY: 'sk-x' }) as OpenAIChatModel;
    expect(model).toMatchObject({ name: 'openai', modelId: 'gpt-5-mini', url: 'https://api.openai.com/v1/chat/completions' });
  });

  it('fails at construction without OPENAI_API_KEY, naming the variable to set', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    vi.stubEnv('OPENAI_BASE_URL', '');
    expect(() => createAgent({ model: 'openai:gpt-5-mini' })).toThrow(TypeError);
    expect(() => createAgent({ model: 'openai:gpt-5-mini' })).toThrow(/^createAgent: model "openai:gpt-5-mini": OPENAI_API_KEY is not set; set it/);
  });

  it('accepts the string under the `provider` alias too', () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-x');
    expect(() => createAgent({ provider: 'openai:gpt-5-mini' })).not.toThrow();
    expect(() => createAgent({ provider: 'nope:x' })).toThrow(/unknown prefix "nope"/);
  });
});

describe('ollama: prefix', () => {
  it('talks to http://localhost:11434/v1 with no key by default', () => {
    const model = resolveModel('ollama:llama3.2:3b', {}) as OpenAIChatModel;
    expect(model).toMatchObject({ name: 'ollama', modelId: 'llama3.2:3b', url: 'http://localhost:11434/v1/chat/completions' });
  });

  it('follows OLLAMA_BASE_URL, sends no Authorization header and puts maxTokens in max_tokens', async () => {
    server = await openaiCompatibleServer({ responses: [{ reply: { text: 'hi' } }] });
    const model = resolveModel('ollama:llama3.2', { OLLAMA_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-not-for-ollama' });
    await model.generate({ messages: [{ role: 'user', content: 'Hi' }], tools: [], maxTokens: 32 });
    expect(server.requests[0].body).toEqual({ model: 'llama3.2', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 32 });
    expect(server.requests[0].headers).not.toHaveProperty('authorization');
  });
});

describe('model strings that cannot be resolved', () => {
  it('an unknown prefix lists the known ones and how to add one', () => {
    expect(() => createAgent({ model: 'claude:sonnet' })).toThrow(/model "claude:sonnet": unknown prefix "claude"; known prefixes: openai, ollama.*registerModelPrefix\('claude'/);
  });

  it('a string without a prefix or without a model id shows the form to write', () => {
    for (const spec of ['gpt-5-mini', 'openai:', ':gpt']) {
      expect(() => createAgent({ model: spec })).toThrow(/is not "prefix:model-id"; write e\.g\. 'openai:gpt-5-mini'/);
    }
  });
});

describe('registerModelPrefix', () => {
  const echo = (modelId: string): ModelProvider => ({
    name: 'echo', modelId,
    async generate(request) {
      const last = request.messages[request.messages.length - 1];
      return { message: { role: 'assistant', content: `${modelId} says ${last.content}` }, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: 'stop' };
    },
  });

  it('adds a prefix whose factory gets the model id and the environment', async () => {
    const seen: Array<[string, string | undefined]> = [];
    registerModelPrefix('echo-test', (id, env) => {
      seen.push([id, env.HOME === undefined ? undefined : 'has HOME']);
      return echo(id);
    });
    expect(modelPrefixes()).toContain('echo-test');
    const result = await createAgent({ model: 'echo-test:parrot:v2' }).run('hello');
    expect(result.text).toBe('parrot:v2 says hello');
    expect(seen).toEqual([['parrot:v2', process.env.HOME === undefined ? undefined : 'has HOME']]);
  });

  it('reports a factory that throws as the model string\'s error, its message said once', () => {
    const missing = new Error('ECHO_TOKEN is not set');
    registerModelPrefix('echo-broken', () => { throw missing; });
    let caught: unknown;
    try {
      createAgent({ model: 'echo-broken:x' });
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).message).toBe('createAgent: model "echo-broken:x": ECHO_TOKEN is not set');
    // Printed as Node prints an uncaught error, causes included: the message appears once.
    expect(inspect(caught).split('ECHO_TOKEN is not set')).toHaveLength(2);
  });

  it('rejects a factory result that is not a provider, and bad prefixes or factories', () => {
    registerModelPrefix('echo-empty', () => ({}) as ModelProvider);
    expect(() => resolveModel('echo-empty:x')).toThrow(/the factory registered for "echo-empty" returned no model provider/);
    expect(() => registerModelPrefix('Bad Prefix', () => echo('x'))).toThrow(/prefix must be lower-case letters/);
    expect(() => registerModelPrefix('ok', 'nope' as never)).toThrow(/factory must be a function/);
  });
});
