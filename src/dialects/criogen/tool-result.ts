const MARK = Symbol.for('koagent.toolResult');

/**
 * Return it from a criogen Hook's `beforeTool` to settle the call with `value` and skip the tool
 * (a cached answer, a stub in a dry run). `value` is what the model sees, sent as JSON.
 *
 * Recognise it with `ToolResult.is(x)`: a marker, not `instanceof`, so a ToolResult made by
 * another copy of koagent (two versions in one `node_modules`) still counts.
 *
 * @example beforeTool(call) { if (call.name === 'get_time') return new ToolResult({ time: '12:00' }); }
 */
export class ToolResult {
  readonly value: unknown;

  constructor(value: unknown) {
    this.value = value;
    Object.defineProperty(this, MARK, { value: true });
  }

  /** True for a `ToolResult` from any copy of koagent (a marker, not `instanceof`). */
  static is(value: unknown): value is ToolResult {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARK] === true;
  }
}
