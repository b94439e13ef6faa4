import { describe, expect, it } from 'vitest';
import { compose } from '../../../src/core/stacks/compose.js';
import type { Layer, ReturnCheck } from '../../../src/core/vocabulary/layer.js';
import { errorOrigin, KoagentError } from '../../../src/core/vocabulary/errors.js';

type Ctx = { log: string[] };
type LayerFn = Layer<Ctx, string>['fn'];

/** One of koagent's own steps: a layer like any other, with no check of its own, passing the call on. */
const step = (name: string, log: string[]): Layer<Ctx, string> => ({ name, fn: (_c, next) => { log.push(name); return next(); } });

// Every behaviour below holds for layers written as `async` functions and for plain functions
// that return a promise: each kind has a wrapper of its own (see compose.ts).
const kinds: [string, (fn: LayerFn) => LayerFn][] = [
  ['async', (fn) => fn],
  ['plain', (fn) => (ctx, next) => fn(ctx, next)],
];

describe.each(kinds)('compose, %s layers', (_kind, written) => {
  const layer = (name: string, fn: LayerFn, check?: ReturnCheck<Ctx, string>): Layer<Ctx, string> => ({ name, fn: written(fn), ...(check ? { check } : {}) });

  describe('compose: order', () => {
    it('runs code before next() in registration order and code after it in reverse', async () => {
      const ctx: Ctx = { log: [] };
      const mk = (n: string) => layer(n, async (c, next) => { c.log.push(`in ${n}`); const v = await next(); c.log.push(`out ${n}`); return v; });
      const run = compose([mk('a'), mk('b'), mk('c')], async (c) => { c.log.push('terminal'); return 'done'; });
      expect(await run(ctx)).toBe('done');
      expect(ctx.log).toEqual(['in a', 'in b', 'in c', 'terminal', 'out c', 'out b', 'out a']);
    });
  });

  describe('compose: next() re-entry', () => {
    it('allows calling next() again after the previous call settled (retry)', async () => {
      let attempts = 0;
      const run = compose([layer('retry', async (_c, next) => { try { return await next(); } catch { return next(); } })],
        async () => { attempts++; if (attempts === 1) throw new Error('flaky'); return 'ok'; });
      expect(await run({ log: [] })).toBe('ok');
      expect(attempts).toBe(2);
    });

    it('rejects a second next() while the first is still pending, naming the layer', async () => {
      const run = compose([layer('eager', async (_c, next) => { const a = next(); const b = next(); await a; return b; })], async () => 'x');
      const error = await run({ log: [] }).catch((e) => e);
      expect(KoagentError.is(error)).toBe(true);
      expect(error.message).toMatch(/eager called next\(\) again while its previous next\(\) was still pending/);
      expect(errorOrigin(error)).toEqual({ kind: 'layer', name: 'eager' });
    });
  });

  describe('compose: errors', () => {
    it('blames the layer that threw, not the layers the error passed through', async () => {
      const run = compose([
        layer('outer', async (_c, next) => next()),
        layer('thrower', async () => { throw new Error('boom'); }),
      ], async () => 'never');
      const error = await run({ log: [] }).catch((e) => e);
      expect(error.message).toBe('boom');
      expect(errorOrigin(error)).toEqual({ kind: 'layer', name: 'thrower' });
    });

    it('lets an outer layer catch an inner error with try/catch around next()', async () => {
      const run = compose([
        layer('catcher', async (_c, next) => { try { return await next(); } catch (e) { return `caught ${(e as Error).message}`; } }),
        layer('thrower', () => { throw new Error('sync boom'); }),
      ], async () => 'never');
      expect(await run({ log: [] })).toBe('caught sync boom');
    });

    it('wraps a thrown primitive so it can carry the layer, keeping the value as cause', async () => {
      const run = compose([layer('prim', async () => { throw 'nope'; })], async () => 'x');
      const error = await run({ log: [] }).catch((e) => e);
      expect(KoagentError.is(error)).toBe(true);
      expect(error.cause).toBe('nope');
      expect(errorOrigin(error)?.name).toBe('prim');
    });

    it('rejects a layer that returns nothing, naming it', async () => {
      const run = compose([layer('forgetful', async (_c, next) => { await next(); return undefined as unknown as string; })], async () => 'x');
      const error = await run({ log: [] }).catch((e) => e);
      expect(error.message).toMatch(/forgetful returned nothing/);
      expect(errorOrigin(error)?.name).toBe('forgetful');
    });
  });

  describe('compose: re-entry through koagent\'s own steps', () => {
    it('lets a checked layer retry through a built-in step and another checked layer (the rest is dispatched again)', async () => {
      const log: string[] = [];
      let attempts = 0;
      const run = compose([
        layer('retry', async (_c, next) => { try { return await next(); } catch { log.push('retrying'); return next(); } }),
        step('koagent:step', log),
        layer('flaky', async (_c, next) => { if (++attempts === 1) throw new Error('first attempt fails'); return next(); }),
      ], async () => 'done');
      expect(await run({ log: [] })).toBe('done');
      expect(attempts).toBe(2);
      expect(log).toEqual(['koagent:step', 'retrying', 'koagent:step']);
    });

    it('still refuses a concurrent next() through a built-in step', async () => {
      const log: string[] = [];
      const run = compose([
        layer('eager', async (_c, next) => { const [a] = await Promise.all([next(), next()]); return a; }),
        step('koagent:step', log),
        layer('inner', async (_c, next) => next()),
      ], async () => 'x');
      const error = await run({ log: [] }).catch((e) => e);
      expect(errorOrigin(error)).toEqual({ kind: 'layer', name: 'eager' });
    });

    it('runs a stack of built-in steps alone in order, and blames one that throws', async () => {
      const log: string[] = [];
      const run = compose([step('a', log), step('b', log)], async () => { log.push('terminal'); return 'ok'; });
      expect(await run({ log: [] })).toBe('ok');
      expect(log).toEqual(['a', 'b', 'terminal']);
      const broken = compose([step('a', log), { name: 'koagent:broken', fn: () => { throw new Error('bug'); } }], async () => 'never');
      expect(errorOrigin(await broken({ log: [] }).catch((e) => e))).toEqual({ kind: 'layer', name: 'koagent:broken' });
    });
  });

  describe('compose: what a layer returns is checked where it returns it', () => {
    const awaiting = (name: string, after: (out: string) => string = (out) => out, check?: ReturnCheck<Ctx, string>) => layer(name, async (_c, next) => after(await next()), check);

    it('blames an awaiting layer that throws after its next() resolved, through awaiting layers that rethrow', async () => {
      const run = compose([awaiting('outer'), awaiting('thrower', () => { throw new Error('after next'); }), awaiting('inner')], async () => 'x');
      const error = await run({ log: [] }).catch((e) => e);
      expect(error.message).toBe('after next');
      expect(errorOrigin(error)).toEqual({ kind: 'layer', name: 'thrower' });
    });

    it('names the awaiting layer that returned nothing, not the awaiting layers that passed it on', async () => {
      const run = compose([awaiting('outer'), awaiting('forgetful', () => undefined as unknown as string), awaiting('inner')], async () => 'x');
      const error = await run({ log: [] }).catch((e) => e);
      expect(error.message).toMatch(/^forgetful returned nothing/);
      expect(errorOrigin(error)?.name).toBe('forgetful');
    });

    it('names the layer whose value the check refuses, when layers outside only passed it on', async () => {
      const check = (_c: Ctx, out: string, name: string) => { if (out === 'bad') throw new TypeError(`${name} returned bad`); return out; };
      const run = compose([awaiting('outer', undefined, check), awaiting('spoiler', () => 'bad', check), awaiting('inner', undefined, check)], async () => 'good');
      const error = await run({ log: [] }).catch((e) => e);
      expect(error.message).toBe('spoiler returned bad');
      expect(errorOrigin(error)?.name).toBe('spoiler');
    });

    it('blames a layer that settles without next() at once, and lets an outer layer catch it', async () => {
      const check = (_c: Ctx, out: string, name: string) => { if (out === 'bad') throw new TypeError(`${name} returned bad`); return out; };
      const run = compose([
        layer('catcher', async (_c, next) => { try { return await next(); } catch (e) { return `caught: ${(e as Error).message}`; } }, check),
        layer('shortcut', async () => 'bad', check),
      ], async () => 'never');
      expect(await run({ log: [] })).toBe('caught: shortcut returned bad');
    });

    it('traces a bad value through a layer that awaited something before its next(), to the layer that made it', async () => {
      const check = (_c: Ctx, out: string, name: string) => { if (out === 'bad') throw new TypeError(`${name} returned bad`); return out; };
      const late = layer('late', async (_c, next) => { await Promise.resolve(); return next(); }, check);
      const spoiled = compose([late, awaiting('spoiler', () => 'bad', check)], async () => 'good');
      expect(errorOrigin(await spoiled({ log: [] }).catch((e) => e))?.name).toBe('spoiler');
      const forgetful = compose([layer('late-forgetful', async (_c, next) => { await Promise.resolve(); await next(); return undefined as unknown as string; }), awaiting('inner')], async () => 'x');
      const error = await forgetful({ log: [] }).catch((e) => e);
      expect(error.message).toMatch(/^late-forgetful returned nothing/);
      expect(await compose([late, awaiting('inner', undefined, check)], async () => 'fine')({ log: [] })).toBe('fine');
    });

    it('checks nothing twice: a stack of pass-through layers hands back the terminal\'s own promise', async () => {
      const terminal = Promise.resolve('t');
      const run = compose([layer('a', (_c, next) => next()), layer('b', (_c, next) => next())], () => terminal);
      expect(run({ log: [] })).toBe(terminal);
    });
  });
});
