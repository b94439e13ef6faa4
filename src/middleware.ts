/**
 * koagent's built-in middleware, each one unit with its own options: retry, timeout,
 * compaction and the media store (also on the package root), and the library of docs/built-in-middleware.md.
 * Also the key-value store the cross-run ones keep their state in.
 *
 * @example
 * ```ts
 * import { retryMiddleware, memoryKeyValues } from 'koagent/middleware';
 * ```
 *
 * @packageDocumentation
 * @module koagent/middleware
 */
// The `koagent/middleware` entry. Each built-in lives in src/middleware/<name>-middleware.ts and
// imports only the public API; this file only lists them.
/** @category Middleware */
export { compactionMiddleware, type CompactionOptions } from './middleware/compaction-middleware.js';
/** @category Middleware */
export { fileMediaStore, mediaStoreMiddleware, type MediaStore, type MediaStoreOptions } from './middleware/media-store-middleware.js';
/** @category Middleware */
export { isRetryableError, retryMiddleware, type RetryAttempt, type RetryOptions } from './middleware/retry-middleware.js';
/** @category Middleware */
export { timeoutMiddleware, TimeoutError, type TimeoutOptions } from './middleware/timeout-middleware.js';
/** @category Key-value stores */
export { keyValuesOf, memoryKeyValues, type KeyValueSource, type KeyValueStore } from './stores/key-values.js';

// The library of built-ins: one block each, in the order of docs/built-in-middleware.md.
/** @category Middleware */
export { toolCallLimitMiddleware, type ToolCallCaps, type ToolCallLimitOptions } from './middleware/tool-call-limit-middleware.js';
/** @category Middleware */
export { CLEARED_PLACEHOLDER, contextEditingMiddleware, type ContextEditingOptions } from './middleware/context-editing-middleware.js';
/** @category Middleware */
export { loopDetectionMiddleware, type LoopDetectionOptions } from './middleware/loop-detection-middleware.js';
/** @category Middleware */
export { estimateRequest, rateLimitMiddleware, type RateLimitOptions, type RateLimitWait } from './middleware/rate-limit-middleware.js';
/** @category Middleware */
export { requestKey, responseCacheMiddleware, type ResponseCacheOptions } from './middleware/response-cache-middleware.js';
/** @category Middleware */
export { toolCacheMiddleware, type ToolCache, type ToolCacheOptions } from './middleware/tool-cache-middleware.js';
/** @category Middleware */
export { toolSelectorMiddleware, type ToolSelectorOptions } from './middleware/tool-selector-middleware.js';
/** @category Middleware */
export { todoListMiddleware, todosOf, type Todo, type TodoListOptions, type TodoStatus } from './middleware/todo-list-middleware.js';
/** @category Middleware */
export { modelFallbackMiddleware, type FallbackAttempt, type FallbackRecord, type ModelFallbackOptions } from './middleware/model-fallback-middleware.js';
/** @category Middleware */
export { costBudgetMiddleware, type CostBudgetOptions, type CostRecord, type ModelPrice, type PriceTable } from './middleware/cost-budget-middleware.js';
/** @category Middleware */
export { promptCachingMiddleware, type CacheBreakpoint, type PromptCachingOptions } from './middleware/prompt-caching-middleware.js';
/** @category Middleware */
export { piiRedactionMiddleware, type PiiCustomDetector, type PiiDetectorName, type PiiMatch, type PiiMode, type PiiRedactionMiddleware, type PiiRedactionOptions, type PiiReport, type PiiTarget } from './middleware/pii-redaction-middleware.js';
/** @category Middleware */
export { guardrailsMiddleware, type GuardrailsOptions, type GuardrailTripped, type ModelGuardrail, type ModelGuardrailInput, type ModelGuardrailVerdict } from './middleware/guardrails-middleware.js';
/** @category Middleware */
export { toolEmulatorMiddleware, type ToolEmulator, type ToolEmulatorOptions } from './middleware/tool-emulator-middleware.js';
