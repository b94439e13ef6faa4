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
export { mockModel, type MockCall, type MockModel, type MockModelOptions, type MockReasoning, type MockReply, type MockToolCall } from './mock-model.js';
/** @category Testing */
export {
  openaiCompatibleServer,
  type OpenAICompatibleServer,
  type OpenAICompatibleServerOptions,
  type ReceivedRequest,
  type ScriptedReply,
  type ScriptedResponse,
  type ScriptedToolCall,
} from './openai-compatible-server.js';
