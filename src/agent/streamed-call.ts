// Any call of an agent as a stream: its segments get the stream's listener and a signal the
// stream can abort, and stream (provider.stream, text deltas) as `agent.stream` does.
import type { RunCallOptions } from './options.js';
import { linkSignal } from '../core/run/cancellation.js';
import { AgentStream } from '../features/streaming/agent-stream.js';
import type { SegmentRequest } from './run-segment.js';

/** Whether a call's options ask for a stream (`{ stream: true }`). */
export function wantsStream(options: unknown): boolean {
  return typeof options === 'object' && options !== null && (options as RunCallOptions).stream === true;
}

/**
 * `start` the call with `request` made to stream: it gets the stream's listener, and a signal
 * that aborts when the caller's does or the consumer stops reading. `start` throwing at once
 * (refused input) throws here; its rejection rejects the stream's `result`.
 */
export function streamedCall<R>(request: SegmentRequest, start: (request: SegmentRequest) => Promise<R>): AgentStream<R> {
  const controller = new AbortController();
  const unlink = linkSignal(request.signal, (reason) => controller.abort(reason));
  return new AgentStream<R>(
    (listener) => {
      let done: Promise<R>;
      try {
        done = start({ ...request, signal: controller.signal, streaming: true, listeners: [...(request.listeners ?? []), listener] });
      } catch (error) {
        unlink(); // refused input: no run will ever stop listening to the caller's signal
        throw error;
      }
      done.finally(unlink).catch(() => undefined);
      return done;
    },
    (reason) => controller.abort(reason),
  );
}

/** `call()` in a promise: whatever it throws at once rejects the promise, like every later failure of the call. */
export async function later<T>(call: () => Promise<T>): Promise<T> {
  return call();
}
