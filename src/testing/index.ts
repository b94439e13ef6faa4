export { mockModel, type MockCall, type MockModel, type MockModelOptions, type MockReasoning, type MockReply, type MockToolCall } from './mock-model.js';
