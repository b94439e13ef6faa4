// The code that runs inside every sandbox before the hook module: the `koagent` module the hooks
// may import (ToolResult, ToolError), the granted globals, and the two entry points the host
// calls. Everything crosses the boundary as JSON text; what comes out is checked by the host, so
// code in the sandbox that breaks this prelude (a tampered prototype) only breaks its own calls.

/**
 * The one module a hook source may import (as `koagent` or `koagent/hooks`): the hook classes,
 * and the two text helpers hooks use on message content, written again here (they are pure).
 */
export const KOAGENT_MODULE = `
const { ToolResult, ToolError } = globalThis.__koagent_classes;
export { ToolResult, ToolError };
export function textOf(content) {
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
}
export function mapText(content, fn) {
  if (typeof content === 'string') return fn(content);
  return content.map((part) => (part.type === 'text' ? { ...part, text: fn(part.text) } : part));
}
`;

/**
 * Installed once per sandbox, as a script. `__koagent_bridge` (host functions, taken away again
 * at once) reads lazy context fields, keeps hook state, emits events, logs and calls granted
 * functions. `granted` names the functions the options grant.
 */
export function prelude(granted: readonly string[], logs: boolean): string {
  return `'use strict';
(() => {
  const bridge = globalThis.__koagent_bridge;
  delete globalThis.__koagent_bridge;
  const { parse, stringify } = JSON;
  const { freeze, defineProperty, getPrototypeOf, keys } = Object;
  const isArray = Array.isArray;
  const fnToString = Function.prototype.toString;
  const call = (fn, self, args) => Reflect.apply(fn, self, args);

  class ToolResult { constructor(value) { this.value = value; } static is(v) { return v instanceof ToolResult; } }
  class ToolError extends Error {
    constructor(message, kind) { super(message); this.name = 'ToolError'; if (kind !== undefined) this.kind = kind; }
    static is(v) { return v instanceof ToolError; }
  }
  defineProperty(globalThis, '__koagent_classes', { value: freeze({ ToolResult, ToolError }) });

  const text = (value) => { try { const t = stringify(value); return t === undefined ? String(value) : t; } catch { return String(value); } };
  const say = ${logs ? `(level) => (...args) => bridge.log(level, stringify(args.map((a) => (typeof a === 'string' ? a : text(a)))))` : '() => () => undefined'};
  globalThis.console = freeze({ log: say('log'), info: say('info'), warn: say('warn'), error: say('error'), debug: say('debug') });
  // Always defined: without the log option it prints nothing, as console.log does.
  globalThis.log = say('log');
  for (const name of ${JSON.stringify(granted)}) {
    globalThis[name] = (...args) => bridge.call(name, stringify(args)).then((json) => (json === undefined ? undefined : parse(json)));
  }

  const deepFreeze = (value) => {
    if (typeof value !== 'object' || value === null) return value;
    for (const key of keys(value)) deepFreeze(value[key]);
    return freeze(value);
  };

  let hooks = [];
  const METHODS = ['preToolCall', 'postToolCall', 'preGenerate', 'postGenerate', 'onStart', 'beforeModel', 'afterModel', 'beforeTool', 'afterTool', 'onEnd'];
  const isClass = (f) => typeof f === 'function' && /^class[\\s{]/.test(call(fnToString, f, []));
  const describe = (hook, exportName) => {
    const ctor = getPrototypeOf(hook)?.constructor;
    const className = typeof ctor === 'function' && ctor !== Object && ctor.name ? ctor.name : undefined;
    const methods = METHODS.filter((m) => typeof hook[m] === 'function');
    return { exportName, name: typeof hook.name === 'string' ? hook.name : undefined, hasName: hook.name !== undefined, className, methods };
  };
  // The hooks of the module: its default export (a hook or a list), else its named exports in
  // the order given. Classes are instantiated, as a criogen Hook is given as an instance.
  defineProperty(globalThis, '__koagent_register', { value: (ns, order) => {
    const take = (value, exportName) => {
      if (isClass(value)) value = new value();
      if (typeof value !== 'object' || value === null || isArray(value)) return;
      hooks.push(value);
      return describe(value, exportName);
    };
    const found = [];
    if (ns.default !== undefined) {
      const list = isArray(ns.default) ? ns.default : [ns.default];
      list.forEach((value, i) => { const d = take(value, isArray(ns.default) ? 'default[' + i + ']' : 'default'); if (d) found.push(d); });
    } else {
      const names = parse(order).filter((n) => n in ns);
      for (const n of keys(ns)) if (!names.includes(n)) names.push(n);
      for (const n of names) { if (typeof ns[n] === 'function' && !isClass(ns[n])) continue; const d = take(ns[n], n); if (d) found.push(d); }
    }
    return stringify(found);
  } });

  // A context: its plain fields, with the heavy ones (transcript, run state, request) read from
  // the host on first use, through getters on one prototype (defining them per call costs more
  // than the rest of the call). The watched fields go back as they are after the call ("after");
  // the host, which knows what it sent, tells what changed.
  const inner = new WeakMap();
  const load = (ctx, key) => {
    const own = inner.get(ctx);
    if (own === undefined || !own.given.lazy.includes(key)) return undefined;
    if (key in own.values) return own.values[key];
    const json = bridge.read(key);
    let value = json === undefined ? undefined : parse(json);
    if (key === 'state') deepFreeze(value);
    if (key === 'request' && own.given.linked && value) value.messages = load(ctx, 'messages');
    own.values[key] = value;
    return value;
  };
  class Context {}
  for (const key of ['messages', 'state', 'request']) {
    defineProperty(Context.prototype, key, { enumerable: true, get() { return load(this, key); }, set(next) { load(this, key); const own = inner.get(this); if (own) own.values[key] = next; } });
  }
  const withoutMessages = (request) => { if (typeof request !== 'object' || request === null) return request; const { messages, ...rest } = request; return rest; };
  const context = (given, watched) => {
    const ctx = new Context();
    const own = { given, values: {} };
    inner.set(ctx, own);
    const fields = given.fields;
    for (const key of keys(fields)) ctx[key] = fields[key];
    if (given.hookState) ctx.setHookState = (name, value) => { bridge.setHookState(String(name), stringify(value)); };
    if (given.emit) ctx.emit = (event) => { bridge.emit(stringify(event)); };
    watched.push(() => {
      const after = {};
      for (const key of given.watch) {
        if (given.lazy.includes(key) ? !(key in own.values) : !(key in fields)) continue;
        after[key] = key === 'request' && given.linked ? withoutMessages(ctx[key]) : ctx[key];
      }
      return after;
    });
    return ctx;
  };

  const argument = (given, watched) => {
    if (given.$ === 'ctx') return context(given, watched);
    if (given.$ === 'toolError') return new ToolError(given.message, given.kind);
    return given.value;
  };

  const envelope = (returned, watched) => {
    const after = watched.map((f) => f());
    if (returned === undefined) return stringify({ kind: 'nothing', after });
    if (returned instanceof ToolResult) return stringify({ kind: 'toolResult', value: returned.value, after });
    if (returned instanceof ToolError) return stringify({ kind: 'toolError', message: String(returned.message), errorKind: returned.kind, after });
    if (typeof returned === 'function' || typeof returned === 'symbol' || typeof returned === 'bigint') return stringify({ kind: 'unserializable', type: typeof returned, after });
    const json = stringify(returned);
    return json === undefined ? stringify({ kind: 'nothing', after }) : '{"kind":"value","value":' + json + ',"after":' + stringify(after) + '}';
  };
  const failure = (error, watched) => {
    let after = [];
    try { after = watched.map((f) => f()); } catch {}
    const isError = error instanceof Error;
    return stringify({ kind: 'threw', name: isError ? String(error.name) : undefined, message: isError ? String(error.message) : text(error), toolError: error instanceof ToolError, errorKind: error?.kind, after });
  };

  defineProperty(globalThis, '__koagent_invoke', { value: (index, method, json) => {
    const watched = [];
    let returned;
    try {
      const hook = hooks[index];
      const args = parse(json).map((given) => argument(given, watched));
      returned = call(hook[method], hook, args);
    } catch (error) {
      return failure(error, watched);
    }
    if (typeof returned?.then !== 'function') {
      try { return envelope(returned, watched); } catch (error) { return failure(error, watched); }
    }
    return Promise.resolve(returned).then((value) => envelope(value, watched), (error) => failure(error, watched));
  } });
})();
`;
}
