/**
 * Test helpers: `mockModel`, a scripted provider, and `openaiCompatibleServer`, a scripted Chat
 * Completions server on loopback for agents on `openai()`.
 *
 * @example
 * ```ts
 * import { mockModel, openaiCompatibleServer } from 'koagent/testing';
 * ```
 *
 * @packageDocumentation
 * @module koagent/testing
 */
/** @category Testing */
export { mockModel, type MockModel, type MockReply, type MockToolCall } from './mock-model.js';
/** @category Testing */
export { openaiCompatibleServer, type OpenAICompatibleServer, type ScriptedResponse } from './openai-compatible-server.js';
