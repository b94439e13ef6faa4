// The shape of the tree, as the design states it: the core split by job, each folder held to
// the ones below it by a dependency rule, and durability outside the core.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The lines of the files under `dir` that match `pattern`, as `file:line: text`. */
function grep(dir: string, pattern: RegExp): string[] {
  return filesUnder(dir).flatMap((file) =>
    readFileSync(file, 'utf8').split('\n').flatMap((line, i) => (pattern.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('the core', () => {
  const folders = readdirSync(join(src, 'core')).filter((name) => statSync(join(src, 'core', name)).isDirectory());

  it('is split into folders by job, and holds no file outside them', () => {
    expect(folders.sort()).toEqual(['run', 'stacks', 'state', 'vocabulary']);
    expect(readdirSync(join(src, 'core')).filter((name) => !folders.includes(name))).toEqual([]);
  });

  it('has a dependency rule for each of its folders', () => {
    const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as { forbidden: { name: string; from: { path?: string } }[] };
    for (const folder of folders) {
      const rule = config.forbidden.find((r) => r.from.path === `^src/core/${folder}/`);
      expect(rule, `a rule from src/core/${folder}`).toBeDefined();
    }
    expect(config.forbidden.some((r) => r.from.path === '^src/core/' && r.name === 'core-knows-no-feature')).toBe(true);
    expect(config.forbidden.some((r) => r.from.path === '^src/durable/')).toBe(true);
  });

  it('knows nothing of durability: no word of checkpoints, journals or leases in it', () => {
    expect(grep(join(src, 'core'), /checkpoint|journal|lease/i)).toEqual([]);
  });
});

describe('the source', () => {
  it('composes and builds the stacks in at most 150 lines, with one kind of layer and no after-the-fact blame', () => {
    const lines = (file: string) => readFileSync(join(src, file), 'utf8').trimEnd().split('\n').length;
    expect(lines('core/stacks/compose.ts') + lines('core/stacks/stacks.ts')).toBeLessThanOrEqual(150);
    expect(readdirSync(join(src, 'core/stacks')).sort()).toEqual(['compose.ts', 'stacks.ts']);
    // No second kind of layer (koagent's "trusted" steps were one), and no `next(ctx)` hand-off.
    expect(grep(src, /\btrusted\s*[:?]|TrustedLayer|\bnext\(ctx\)|\bnext\(call\)/)).toEqual([]);
  });

  it('keeps no mutable state at module level in the core and the features: no module `let`, no module map or set that is not read-only', () => {
    const moduleState = /^(export )?(let|var) |^(export )?const \w+ = new (WeakMap|WeakSet|Map|Set)\b/;
    const found = [...grep(join(src, 'core'), moduleState), ...grep(join(src, 'features'), moduleState)];
    expect(found).toEqual([]);
  });

  it('keeps the segment inside the core: a dependency rule forbids reaching it from outside', () => {
    const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as { forbidden: { name: string; from: { path?: string; pathNot?: string }; to: { path?: string | string[] } }[] };
    const rule = config.forbidden.find((r) => r.name === 'the-segment-stays-in-the-core');
    expect(rule?.from).toEqual({ path: '^src/', pathNot: '^src/core/' });
    expect([rule?.to.path].flat().some((path) => path !== undefined && new RegExp(path).test('src/core/run/segment.ts'))).toBe(true);
    expect(grep(src, /\bsegmentOf\b/).filter((line) => !line.startsWith(join('src', 'core')))).toEqual([]);
  });

  it('is written for no engine: no comment cites V8, inlining or instruction counts (performance notes live in docs/performance.md)', () => {
    const comment = /^\s*(\/\/|\*|\/\*)/;
    const engine = /\bV8\b|\binlin(ed|es|ing)\b|\binstruction count|\binstructions (a|per) /i;
    expect(grep(src, engine).filter((line) => comment.test(line.slice(line.indexOf(': ') + 2)))).toEqual([]);
  });
});

describe("a run's status", () => {
  it('is decided in one module: only the segment asks the writer to begin, end or fail a segment', () => {
    const code = (line: string) => !/^\S+:\d+: (\*|\/\/)/.test(line);
    const calls = grep(src, /\bwriter\.(beginSegment|end|fail)\(/).filter(code);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((line) => !line.startsWith(join('src', 'core', 'run', 'segment.ts')))).toEqual([]);
  });
});

describe('features the core knows nothing of', () => {
  it('structured output and sub-agents: the core has a generic nested run behind a call, no child runs, no repair turns', () => {
    const machinery = ['state', 'run', 'stacks'].map((folder) => join(src, 'core', folder));
    expect(machinery.flatMap((dir) => grep(dir, /\b[Cc]hild\b|Child[A-Z]|\breopen\(|(?<!its )[Oo]utput schema|[Rr]epair/))).toEqual([]);
  });

  it('streaming and tracing: a segment\'s mode is opaque to the core\'s machinery, no bit of it named there', () => {
    const machinery = ['state', 'run', 'stacks'].map((folder) => join(src, 'core', folder));
    // Any spelling, in code or comment: STREAMING, isTracing, streamingLayer, "a streaming segment".
    expect(machinery.flatMap((dir) => grep(dir, /streaming|tracing/i))).toEqual([]);
  });
});

/** The zod calls a module makes when it is imported: those outside any function or class body, as `line: text`. */
function zodCallsAtImport(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    // A body runs when called, not when the module is evaluated.
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) return;
    if (ts.isCallExpression(node) && /^z\./.test(node.expression.getText(source))) {
      found.push(`${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${node.getText(source).slice(0, 60)}`);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('importing koagent', () => {
  it('builds no schema that only resuming a run or structured output needs: those are made on first use', () => {
    // A good part of what importing the root cost was these schemas, built by every program.
    for (const module of ['core/state/state-schema.ts', 'features/structured-output.ts']) {
      expect(zodCallsAtImport(join(src, module)), module).toEqual([]);
    }
  });

  it('is seen building a schema at import when a module does (the check above can fail)', () => {
    expect(zodCallsAtImport(join(src, 'tools/define.ts')).length + zodCallsAtImport(join(src, 'agent/options.ts')).length).toBeGreaterThan(0);
  });
});
