// HookRegistry: an ordered collection of AgentHooks keyed by name, and an agent given one.
// Test names quote the seed (000_…txt).
import { describe, expect, it } from 'vitest';
import { createAgent, type Middleware } from '../../../src/index.js';
import { HookRegistry as FromRoot, type AgentHook } from '../../../src/hooks.js';
import { HookRegistry, type AgentHook as FromHooks } from '../../../src/hooks.js';
import { mockModel } from '../../../src/testing/index.js';
import { callTool, searchTool } from './fixtures.js';

/** A logger that keeps its warnings. */
const capture = () => {
  const warnings: string[] = [];
  return { warnings, logger: { warn: (message: string) => void warnings.push(message) } };
};

const hook = (name: string, extra: Partial<AgentHook> = {}): AgentHook => ({ name, preToolCall() {}, ...extra });

describe('HookRegistry: the collection', () => {
  it('"HookRegistry, AgentHook and the context types are available from the package root and from the … /hooks subpath"', () => {
    expect(FromRoot).toBe(HookRegistry);
    const typed: FromHooks = hook('typed');
    expect(new HookRegistry().register(typed).has('typed')).toBe(true);
  });

  it('"an ordered collection with register, registerMany, get, has, list": list() keeps registration order', () => {
    const hooks = new HookRegistry();
    const a = hook('a');
    hooks.register(a);
    hooks.registerMany([hook('b'), hook('c')]);
    expect(hooks.list().map((h) => h.name)).toEqual(['a', 'b', 'c']);
    expect(hooks.get('a')).toBe(a);
    expect(hooks.get('zzz')).toBeUndefined();
    expect(hooks.has('b')).toBe(true);
    expect(hooks.has('zzz')).toBe(false);
  });

  it('"size() — size is a method (hooks.size()), not a Map-style property"', () => {
    const hooks = new HookRegistry().registerMany([hook('a'), hook('b')]);
    expect(typeof hooks.size).toBe('function');
    expect(hooks.size()).toBe(2);
  });

  it('"unregister, clear": unregister(name) says whether there was one; clear() empties it', () => {
    const hooks = new HookRegistry().registerMany([hook('a'), hook('b'), hook('c')]);
    expect(hooks.unregister('b')).toBe(true);
    expect(hooks.unregister('b')).toBe(false);
    expect(hooks.list().map((h) => h.name)).toEqual(['a', 'c']);
    hooks.clear();
    expect(hooks.size()).toBe(0);
    expect(hooks.list()).toEqual([]);
  });

  it('"registering a second hook with the same name replaces the first and logs a warning" — one warning, and the new hook takes the old one\'s position', () => {
    const { warnings, logger } = capture();
    const hooks = new HookRegistry({ logger }).registerMany([hook('a'), hook('b'), hook('c')]);
    const newer = hook('b', { postToolCall() {} });
    hooks.register(newer);
    expect(hooks.list().map((h) => h.name)).toEqual(['a', 'b', 'c']);
    expect(hooks.get('b')).toBe(newer);
    expect(hooks.size()).toBe(3);
    expect(warnings).toEqual(['HookRegistry: a hook named "b" was already registered; the new one replaces it, in its position (#2 of 3)']);
  });

  it('the warning goes to console.warn when no logger is given', () => {
    const original = console.warn;
    const seen: unknown[] = [];
    console.warn = (message: unknown) => void seen.push(message);
    try {
      new HookRegistry().registerMany([hook('x'), hook('x')]);
    } finally {
      console.warn = original;
    }
    expect(seen).toEqual([expect.stringMatching(/a hook named "x" was already registered/)]);
  });

  it('list() is a copy: changing it does not change the registry', () => {
    const hooks = new HookRegistry().register(hook('a'));
    hooks.list().push(hook('intruder'));
    expect(hooks.size()).toBe(1);
  });

  it('HookRegistry.is tells a registry from anything else', () => {
    expect(HookRegistry.is(new HookRegistry())).toBe(true);
    expect(HookRegistry.is({ list: () => [] })).toBe(false);
    expect(HookRegistry.is([])).toBe(false);
  });
});

describe('HookRegistry: bad input', () => {
  it.each([
    ['a hook without a name', { preToolCall() {} }, /HookRegistry\.register\(\): the AgentHook with preToolCall has no name/],
    ['not an object', 'audit', /HookRegistry\.register\(\): an AgentHook must be an object .* got string/],
    ['a method that is not a function', { name: 'x', preGenerate: true }, /HookRegistry\.register\(\): AgentHook "x"\.preGenerate must be a function/],
    ['a criogen Hook', { name: 'x', beforeTool() {} }, /HookRegistry\.register\(\): AgentHook "x" also has beforeTool, which belong to middleware or criogen Hooks/],
  ])('register() refuses %s with a TypeError saying what is wrong', (_what, value, message) => {
    expect(() => new HookRegistry().register(value as never)).toThrow(TypeError);
    expect(() => new HookRegistry().register(value as never)).toThrow(message);
  });

  it('registerMany() checks every hook first: a bad one names its index and leaves the registry unchanged', () => {
    const hooks = new HookRegistry().register(hook('keep'));
    expect(() => hooks.registerMany([hook('a'), { name: 'b', postToolCall: 1 } as never])).toThrow(/HookRegistry\.registerMany\(\): hooks\[1\]: AgentHook "b"\.postToolCall must be a function/);
    expect(() => hooks.registerMany(hook('a') as never)).toThrow(/registerMany\(hooks\): hooks must be an array/);
    expect(hooks.list().map((h) => h.name)).toEqual(['keep']);
  });

  it('new HookRegistry({ logger }) needs a logger with warn()', () => {
    expect(() => new HookRegistry({ logger: {} as never })).toThrow(/logger must have a warn\(message\) method/);
  });

  it('a hook with no methods is a valid (idle) member of a registry', () => {
    expect(new HookRegistry().register({ name: 'idle' }).size()).toBe(1);
  });
});

describe('an agent given a HookRegistry', () => {
  const run = (hooks: HookRegistry, extra: { middleware?: Middleware[] } = {}) =>
    createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks, ...extra }).run('go');

  it('createAgent({ hooks: registry }) runs the registry\'s hooks in its order', async () => {
    const log: string[] = [];
    const hooks = new HookRegistry().registerMany(['a', 'b'].map((n) => hook(n, { preToolCall() { log.push(n); } })));
    await run(hooks);
    expect(log).toEqual(['a', 'b']);
  });

  it('sees the registry live: a hook registered, replaced or unregistered after createAgent counts from the next call on', async () => {
    const log: string[] = [];
    const hooks = new HookRegistry({ logger: capture().logger });
    const agent = createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok', callTool('search', { query: 'q' }), 'ok', callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks });
    await agent.run('one');
    hooks.register(hook('late', { preToolCall() { log.push('late v1'); } }));
    await agent.run('two');
    hooks.register(hook('late', { preToolCall() { log.push('late v2'); } }));
    hooks.register(hook('later', { preToolCall() { log.push('later'); } }));
    hooks.unregister('late');
    await agent.run('three');
    expect(log).toEqual(['late v1', 'later']);
  });

  it('a registry change does not rebuild the agent\'s stacks (its layers are read once per build)', async () => {
    let builds = 0;
    const counter: Middleware = { name: 'counter', get tool(): Middleware['tool'] { builds++; return (_ctx, next) => next(); } };
    const hooks = new HookRegistry();
    const agent = createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok', callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], middleware: [counter], hooks });
    const afterCreate = builds;
    hooks.register(hook('a'));
    await agent.run('one');
    hooks.register(hook('b'));
    await agent.run('two');
    expect(afterCreate).toBeGreaterThan(0);
    expect(builds).toBe(afterCreate);
  });

  it('a call in progress keeps the hooks it started with: a hook registered by a pre-hook first runs on the next call', async () => {
    const log: string[] = [];
    const hooks = new HookRegistry();
    hooks.register(hook('adder', {
      preToolCall() { log.push('adder'); if (!hooks.has('added')) hooks.register(hook('added', { preToolCall() { log.push('added'); }, postToolCall() { log.push('added.post'); } })); },
    }));
    const agent = createAgent({ model: mockModel([callTool('search', { query: 'q' }), callTool('search', { query: 'r' }), 'ok']), tools: [searchTool().tool], hooks });
    await agent.run('go');
    expect(log).toEqual(['adder', 'adder', 'added', 'added.post']);
  });

  it('hooks given with agent.use() after a registry run after the registry\'s hooks', async () => {
    const log: string[] = [];
    const hooks = new HookRegistry().register(hook('from-registry', { preToolCall() { log.push('registry'); } }));
    const agent = createAgent({ model: mockModel([callTool('search', { query: 'q' }), 'ok']), tools: [searchTool().tool], hooks });
    agent.use(hook('used', { preToolCall() { log.push('used'); } }));
    hooks.register(hook('late', { preToolCall() { log.push('late'); } }));
    await agent.run('go');
    expect(log).toEqual(['registry', 'late', 'used']);
  });
});
