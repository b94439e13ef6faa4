import { isModelProvider, type ModelProvider } from '../core/vocabulary/model.js';
import { openai, OPENAI_BASE_URL } from './openai.js';

/**
 * The environment a model string is resolved in (`process.env` unless given).
 *
 * @example const model = resolveModel('openai:gpt-5-mini', { OPENAI_API_KEY: secret });
 *
 * @inline
 */
export type ModelEnv = Readonly<Record<string, string | undefined>>;

/**
 * Makes a provider for the part of a model string after `prefix:`. Throw an `Error` naming the
 * variable or option to set when something is missing; koagent reports it at construction.
 *
 * @example registerModelPrefix('echo', (modelId) => ({ name: 'echo', modelId, async generate() { … } }));
 *
 * @inline
 */
export type ModelFactory = (modelId: string, env: ModelEnv) => ModelProvider;

export const OLLAMA_BASE_URL = 'http://localhost:11434/v1';

const factories = new Map<string, ModelFactory>();

const PREFIX = /^[a-z][a-z0-9._-]*$/;

/**
 * Teach model strings a new prefix (or replace a built-in one): afterwards
 * `createAgent({ model: 'prefix:model-id' })` calls `factory('model-id', process.env)`.
 *
 * @example registerModelPrefix('openrouter', (id, env) => openai({ model: id, baseURL: 'https://openrouter.ai/api/v1', apiKey: env.OPENROUTER_API_KEY }));
 */
export function registerModelPrefix(prefix: string, factory: ModelFactory): void {
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new TypeError(`registerModelPrefix(prefix): prefix must be lower-case letters, digits, ".", "_" or "-", starting with a letter (got ${JSON.stringify(prefix)})`);
  }
  if (typeof factory !== 'function') throw new TypeError(`registerModelPrefix(${JSON.stringify(prefix)}, factory): factory must be a function (modelId, env) => ModelProvider`);
  factories.set(prefix, factory);
}

/** The prefixes model strings know now, built-in ones first. */
export function modelPrefixes(): string[] {
  return [...factories.keys()];
}

/**
 * Turn a model string such as `openai:gpt-5-mini` or `ollama:llama3.2:3b` into a provider.
 * Everything after the first `:` is the model id. A bad string, an unknown prefix or a missing
 * setting is a `TypeError` that says what to write or set.
 *
 * @example const model = resolveModel('ollama:llama3.2');
 */
export function resolveModel(spec: string, env: ModelEnv = process.env): ModelProvider {
  const where = `model ${JSON.stringify(spec)}`;
  if (typeof spec !== 'string') throw new TypeError(`model must be a model provider or a string such as 'openai:gpt-5-mini'`);
  const colon = spec.indexOf(':');
  if (colon <= 0 || colon === spec.length - 1) {
    throw new TypeError(`${where} is not "prefix:model-id"; write e.g. 'openai:gpt-5-mini' or 'ollama:llama3.2' (prefixes: ${modelPrefixes().join(', ')})`);
  }
  const prefix = spec.slice(0, colon);
  const modelId = spec.slice(colon + 1);
  const factory = factories.get(prefix);
  if (factory === undefined) {
    throw new TypeError(`${where}: unknown prefix "${prefix}"; known prefixes: ${modelPrefixes().join(', ')}. Add one with registerModelPrefix('${prefix}', (modelId, env) => provider)`);
  }
  let provider: ModelProvider;
  try {
    provider = factory(modelId, env);
  } catch (error) {
    // The factory's message is in ours; a cause would print it a second time.
    throw new TypeError(`${where}: ${(error as Error)?.message ?? String(error)}`);
  }
  if (!isModelProvider(provider)) throw new TypeError(`${where}: the factory registered for "${prefix}" returned no model provider (an object with generate(request))`);
  return provider;
}

registerModelPrefix('openai', (modelId, env) => {
  const apiKey = env.OPENAI_API_KEY;
  const baseURL = env.OPENAI_BASE_URL;
  // A key is needed for OpenAI itself; a server named by OPENAI_BASE_URL may take none.
  if ((apiKey === undefined || apiKey === '') && (baseURL === undefined || baseURL === '')) {
    throw new Error('OPENAI_API_KEY is not set; set it (and OPENAI_BASE_URL for another OpenAI-compatible server), or pass model: openai({ model, apiKey, baseURL })');
  }
  return openai({ model: modelId, baseURL: baseURL || OPENAI_BASE_URL, ...(apiKey ? { apiKey } : {}) });
});

registerModelPrefix('ollama', (modelId, env) =>
  // Ollama needs no key, and its OpenAI-compatible API reads the older `max_tokens` field.
  openai({ name: 'ollama', model: modelId, baseURL: env.OLLAMA_BASE_URL || OLLAMA_BASE_URL, maxTokensField: 'max_tokens' }));
