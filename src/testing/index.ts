export { mockModel, type MockCall, type MockModel, type MockModelOptions, type MockReasoning, type MockReply, type MockToolCall } from './mock-model.js';
export {
  openAiCompatibleServer,
  type OpenAiCompatibleServer,
  type OpenAiCompatibleServerOptions,
  type ReceivedRequest,
  type ScriptedReply,
  type ScriptedResponse,
  type ScriptedToolCall,
} from './openai-compatible-server.js';
