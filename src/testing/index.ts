/**
 * Test helpers: `mockModel`, a scripted provider, and `openAiCompatibleServer`, a scripted Chat
 * Completions server on loopback for agents on `openai()`.
 *
 * @example
 * ```ts
 * import { mockModel, openAiCompatibleServer } from 'koagent/testing';
 * ```
 *
 * @packageDocumentation
 * @module koagent/testing
 */
/** @category Testing */
export { mockModel, type MockCall, type MockModel, type MockModelOptions, type MockReasoning, type MockReply, type MockToolCall } from './mock-model.js';
/** @category Testing */
export {
  openAiCompatibleServer,
  type OpenAiCompatibleServer,
  type OpenAiCompatibleServerOptions,
  type ReceivedRequest,
  type ScriptedReply,
  type ScriptedResponse,
  type ScriptedToolCall,
} from './openai-compatible-server.js';
