export { mockModel, type MockCall, type MockModel, type MockModelOptions, type MockReply, type MockToolCall } from './mock-model.js';
