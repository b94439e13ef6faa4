// What the engine threw, in the host's words: a limit (QuickJS's own messages for an interrupt
// and for running out of memory) or an error of the hook's, with where in its source it arose.
import type { QuickJSContext, QuickJSHandle, VmCallResult } from 'quickjs-emscripten';
import type { Limit } from './sandbox-error.js';

/** Why a sandbox call stopped, before the hook's name and method are known; `note` says more about a limit. */
export class Fault {
  constructor(readonly limit: Limit | undefined, readonly detail: string, readonly note?: string) {}
}

/** The handle of a result, or a Fault saying what the engine threw (a limit, or an error). */
export function unwrap(vm: QuickJSContext, result: VmCallResult<QuickJSHandle>): QuickJSHandle {
  if (result.error === undefined) return result.value;
  throw new Fault(faultLimit(vm, result.error), describeError(vm, result.error));
}

/** Which limit an error the engine threw means: QuickJS's own words for them. */
export function faultLimit(vm: QuickJSContext, error: QuickJSHandle): Limit | undefined {
  const { name, message } = dumped(vm, error);
  if (name !== 'InternalError') return undefined;
  return message === 'interrupted' ? 'timeoutMs' : message === 'out of memory' ? 'memoryMb' : undefined;
}

export function describeError(vm: QuickJSContext, error: QuickJSHandle): string {
  const { name, message, at } = dumped(vm, error);
  return `${name}: ${message}${at === undefined ? '' : ` (${at})`}`;
}

const seen = new WeakMap<object, { name: string; message: string; at?: string }>();
/** An error of the engine's as name, message and where in the hook source it arose. */
function dumped(vm: QuickJSContext, error: QuickJSHandle): { name: string; message: string; at?: string } {
  const cached = seen.get(error);
  if (cached) return cached;
  let value: { name: string; message: string; at?: string };
  try {
    const raw = vm.dump(error) as { name?: unknown; message?: unknown; stack?: unknown } | unknown;
    if (typeof raw === 'object' && raw !== null) {
      const { name, message, stack } = raw as { name?: unknown; message?: unknown; stack?: unknown };
      value = { name: String(name ?? 'Error'), message: String(message ?? '') };
      const at = typeof stack === 'string' ? /hooks\.js:\d+:\d+/.exec(stack)?.[0] : undefined;
      if (at !== undefined) value.at = at;
    } else value = { name: 'Error', message: String(raw) };
  } catch {
    value = { name: 'Error', message: 'an error that could not be read' };
  }
  seen.set(error, value);
  return value;
}

/**
 * The most text (in characters) that may cross into or out of a sandbox at once: a quarter of its
 * memory, so a huge context is refused before it is copied, rather than filling the engine, its
 * thread or the host.
 */
export function textLimitChars(memoryMb: number): number {
  return Math.floor((memoryMb * 1024 * 1024) / 4);
}

/** Why `text` may not cross into or out of a sandbox of `memoryMb` (undefined when it may): `what` names it. */
export function tooMuchText(text: string | undefined, memoryMb: number, what: string): string | undefined {
  if (text === undefined || text.length <= textLimitChars(memoryMb)) return undefined;
  const mib = (chars: number) => `${(chars / (1024 * 1024)).toFixed(1)} Mi`;
  return `${what} is ${mib(text.length)} characters of JSON, more than a sandbox of memoryMb: ${memoryMb} passes at once (${mib(textLimitChars(memoryMb))}); raise memoryMb or pass less`;
}
