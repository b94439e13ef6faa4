/**
 * A value made the first time it is asked for, then kept: for what only some programs need
 * (a schema checked only when a run is resumed), so importing koagent does not pay for it.
 *
 * @example const stateSchema = lazily(() => z.object({ runId: z.string() })); stateSchema().parse(value);
 */
export function lazily<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
