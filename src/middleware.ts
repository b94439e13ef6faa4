/**
 * koagent's built-in middleware, each one unit with its own options (docs/built-in-middleware.md),
 * with what their options take from you (a media store, a key-value store, a price table, a model
 * guardrail) and what they give back (the todo list). And the helpers koagent checks its own
 * options with, for a middleware of yours that checks its options the same way.
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
// imports only the public API; this file only lists them. An options object's type is read from
// the factory's signature (`Parameters<typeof retryMiddleware>[0]`).
/** @category Middleware */
export { compactionMiddleware } from './middleware/compaction-middleware.js';
/** @category Middleware */
export { fileMediaStore, mediaStoreMiddleware, type MediaStore } from './middleware/media-store-middleware.js';
/** @category Middleware */
export { isRetryableError, retryMiddleware } from './middleware/retry-middleware.js';
/** @category Middleware */
export { timeoutMiddleware, TimeoutError } from './middleware/timeout-middleware.js';
/** @category Key-value stores */
export { memoryKeyValues, type KeyValueStore } from './stores/key-values.js';

// The library of built-ins: one block each, in the order of docs/built-in-middleware.md.
/** @category Middleware */
export { toolCallLimitMiddleware } from './middleware/tool-call-limit-middleware.js';
/** @category Middleware */
export { contextEditingMiddleware } from './middleware/context-editing-middleware.js';
/** @category Middleware */
export { loopDetectionMiddleware } from './middleware/loop-detection-middleware.js';
/** @category Middleware */
export { rateLimitMiddleware } from './middleware/rate-limit-middleware.js';
/** @category Middleware */
export { responseCacheMiddleware } from './middleware/response-cache-middleware.js';
/** @category Middleware */
export { toolCacheMiddleware } from './middleware/tool-cache-middleware.js';
/** @category Middleware */
export { toolSelectorMiddleware } from './middleware/tool-selector-middleware.js';
/** @category Middleware */
export { todoListMiddleware, todosOf, type Todo } from './middleware/todo-list-middleware.js';
/** @category Middleware */
export { modelFallbackMiddleware } from './middleware/model-fallback-middleware.js';
/** @category Middleware */
export { costBudgetMiddleware, type PriceTable } from './middleware/cost-budget-middleware.js';
/** @category Middleware */
export { promptCachingMiddleware } from './middleware/prompt-caching-middleware.js';
/** @category Middleware */
export { piiRedactionMiddleware } from './middleware/pii-redaction-middleware.js';
/** @category Middleware */
export { guardrailsMiddleware, type ModelGuardrail } from './middleware/guardrails-middleware.js';
/** @category Middleware */
export { toolEmulatorMiddleware } from './middleware/tool-emulator-middleware.js';

// Checking a middleware's options as koagent checks its own.
/** @category Options */
export { functionSchema, optionsSchema, parseOptions, wholeNumberSchema } from './api.js';
