// How tests wait: on an event (a promise a hook, a listener or a gate resolves) wherever there
// is one. The two helpers here are for the rest: a turn of the event loop, and a bounded poll of
// a state that no event tells of (a row another process writes). The sleep check
// (test/test-hygiene.test.ts) allows their timers.

/** One turn of the event loop: every promise reaction queued so far has run. No time passes. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Check `check` again and again until it gives something other than undefined or false, and
 * resolve with that; fail, naming `what`, after `timeoutMs`. Only for a state no event tells of
 * (another process's rows, a server's log): where there is an event, wait on it instead.
 *
 * @example const runId = await until(async () => (await pool.query('SELECT run_id FROM koagent_dispatch')).rows[0]?.run_id, 'the scheduled run');
 */
export async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, { timeoutMs = 15_000, everyMs = 20 } = {}): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
