// A model whose stream stops at a point the test chooses and goes on when the test says: a run
// that is surely under way (mid-text) while the test does something to it, without a slow mock.
import type { ModelProvider } from '../../src/index.js';
import type { StreamPart } from '../../src/types.js';

/** A model of `heldModel`: the model, and the hands that hold and release its stream. */
export interface HeldModel {
  model: ModelProvider;
  /** Resolves once the stream is held: `after` text deltas were given, and the next waits. */
  readonly held: Promise<void>;
  /** Let the stream go on, to its end (and every later stream of this model, unheld). */
  release(): void;
}

/**
 * `model`, streamed, holding after its `after`-th text delta (counted over all its streams)
 * until `release()`. A held stream that is aborted (its request's signal) ends with the abort.
 *
 * @example const { model, held, release } = heldModel(mockModel(['one two three']), 1); …; await held; …; release();
 */
export function heldModel(model: ModelProvider, after: number): HeldModel {
  let reached!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let deltas = 0;
  const stream = model.stream!.bind(model);
  const wrapped: ModelProvider = {
    ...model,
    generate: (request) => model.generate(request),
    async *stream(request): AsyncIterable<StreamPart> {
      for await (const part of stream(request)) {
        yield part;
        if (part.type !== 'text' || ++deltas !== after) continue;
        reached();
        const signal = request.signal;
        await new Promise<void>((resolve, reject) => {
          const abort = () => reject(signal!.reason);
          if (signal?.aborted === true) return abort();
          signal?.addEventListener('abort', abort, { once: true });
          void released.then(() => {
            signal?.removeEventListener('abort', abort);
            resolve();
          });
        });
      }
    },
  };
  return { model: wrapped, held, release };
}
