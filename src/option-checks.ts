/**
 * The helpers koagent checks its own options with, for a middleware factory, provider or plugin
 * that checks its options the same way.
 *
 * @example
 * ```ts
 * import { optionsSchema, parseOptions } from 'koagent/option-checks';
 * ```
 *
 * @packageDocumentation
 * @module koagent/option-checks
 */
// The `koagent/option-checks` entry: the helpers koagent's own options are checked with, for a
// middleware factory (or a provider, a plugin) that checks its options the same way: a strict
// zod schema of the options, and a `TypeError` naming the key meant for a misspelled one.
/** @category Middleware */
export { functionSchema, optionsSchema, parseOptions, refuseMisspellings, wholeNumberSchema, type OptionsWording } from './api.js';
