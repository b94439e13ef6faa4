import { describe, expect, it } from 'vitest';
import { compose, type Layer } from '../../src/core/compose.js';
import { errorOrigin, KoagentError } from '../../src/core/errors.js';

type Ctx = { log: string[] };
const layer = (name: string, fn: Layer<Ctx, string>['fn']): Layer<Ctx, string> => ({ name, fn });

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
