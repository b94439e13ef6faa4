/**
 * Why a tool call failed. A tool-level failure is not an exception: it is an outcome the model
 * sees as the call's result, and the run goes on.
 *
 * @example postToolCall(ctx, { error }) { if (error?.kind === 'guardrail') alert(ctx.toolName); }
 */
export type ToolErrorKind = 'validation' | 'not_found' | 'denied' | 'guardrail' | 'execution' | 'tool_error' | 'aborted';

const MARK = Symbol.for('koagent.toolError');

/**
 * Throw from a tool (or a `beforeTool` hook) to give the model this message as the call's
 * error, as is (kind `tool_error`). Any other throw becomes an `execution` error.
 *
 * @example if (!user) throw new ToolError(`No user named ${args.name}`);
 */
export class ToolError extends Error {
  /** Set on the errors a criogen `afterTool` hook receives: the kind of the call's failure. */
  declare readonly kind?: ToolErrorKind;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolError';
    Object.defineProperty(this, MARK, { value: true });
  }

  /** True for a `ToolError` from any copy of koagent (a marker, not `instanceof`). */
  static is(value: unknown): value is ToolError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARK] === true;
  }
}
