// The code in the README and the manual is code users copy: every `ts` block type-checks against
// the package as it is now, and runs offline to its end (the `assert`s in it hold). A block that
// is deliberately partial (it goes on from the block above, or shows a shape with `…` in it) is
// fenced `ts fragment` and is neither checked nor run.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { entryPoints } from '../support/entry-points.js';
import { runExample } from '../support/examples.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

interface Block { page: string; line: number; code: string; fragment: boolean; file: string }

function blocks(): Block[] {
  const found: Block[] = [];
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8');
    for (const match of text.matchAll(/^```(ts|typescript)( fragment)?\n([\s\S]*?)^```/gm)) {
      const line = text.slice(0, match.index).split('\n').length + 1;
      // Beside the page, so that `zod` and the other packages resolve from this project.
      const file = join(root, page.replace(/\.md$/, `.block-${line}.ts`));
      found.push({ page, line, code: match[3], fragment: match[2] !== undefined, file });
    }
  }
  return found;
}

function options(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const paths = Object.fromEntries(Object.entries(entryPoints).map(([name, source]) => [name, [join(root, source)]]));
  // Each block is a module of its own (top-level await, its own names).
  return { ...parsed.options, noEmit: true, declaration: false, paths, moduleDetection: ts.ModuleDetectionKind.Force };
}

/** Every problem TypeScript finds in the blocks, as `page:line: message`. */
function problems(all: Block[]): string[] {
  const byFile = new Map(all.map((block) => [block.file, block]));
  const compilerOptions = options();
  const host = ts.createCompilerHost(compilerOptions);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (path) => byFile.get(path)?.code ?? read(path);
  host.fileExists = (path) => byFile.has(path) || exists(path);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (path, language, ...rest) => {
    const block = byFile.get(path);
    return block ? ts.createSourceFile(path, block.code, language, true, ts.ScriptKind.TS) : getSourceFile(path, language, ...rest);
  };
  const checked = all.filter((block) => !block.fragment);
  const program = ts.createProgram(checked.map((block) => block.file), compilerOptions, host);
  const found: string[] = [];
  const report = (block: Block, diagnostic: ts.Diagnostic) => {
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    found.push(`${block.page}:${block.line + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
  };
  for (const block of checked) {
    const source = program.getSourceFile(block.file)!;
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) report(block, diagnostic);
  }
  return found;
}

/**
 * Runs the blocks one after the other in one child process (tsx, the entry points pointing at
 * their sources) and returns those that threw. The provider keys are set as a reader would have them;
 * no block may reach the network, so the blocks that name a hosted model only build their agent.
 */
async function failures(all: Block[]): Promise<string[]> {
  mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
  // Inside the project, so that the packages the blocks import resolve from it.
  const dir = mkdtempSync(join(root, 'node_modules/.cache/doc-blocks-'));
  try {
    const runnable = all.filter((block) => !block.fragment);
    const files = runnable.map((block, i) => {
      // `.mts`: a module, whatever package scope the folder is in.
      const file = join(dir, `block-${i}.mts`);
      writeFileSync(file, fromSources(block.code));
      return [`${block.page}:${block.line}`, pathToFileURL(file).href];
    });
    writeFileSync(join(dir, 'run.mjs'), RUNNER);
    const env = { ...process.env, OPENAI_API_KEY: 'sk-docs', ANTHROPIC_API_KEY: 'sk-docs', OPENROUTER_API_KEY: 'sk-docs', OPENROUTER_BASE_URL: 'http://127.0.0.1:9/api/v1' };
    const { stdout, stderr } = await runExample('run.mjs', { args: [JSON.stringify(files)], env, cwd: dir });
    const result = stdout.split('\n').find((line) => line.startsWith(MARK));
    if (result === undefined) throw new Error(`the block runner printed no result:\n${stdout}\n${stderr}`);
    return JSON.parse(result.slice(MARK.length)) as string[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The block with `from 'koagent…'` pointing at the entry point's source, on the same lines. */
function fromSources(code: string): string {
  return code.replace(/(from\s+|import\s+)'(koagent(?:\/[a-z-]+)?)'/g, (_match, keyword: string, name: string) => {
    const source = entryPoints[name];
    if (source === undefined) throw new Error(`a block imports ${name}, which is not an entry point of the package`);
    return `${keyword}'${pathToFileURL(join(root, source)).href}'`;
  });
}

const MARK = 'doc-blocks-result ';
const RUNNER = `
const failed = [];
for (const [label, url] of JSON.parse(process.argv[2])) {
  let timer;
  const stuck = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('still running after 15 s')), 15_000); });
  try { await Promise.race([import(url), stuck]); } catch (error) { failed.push(label + ': ' + String(error?.stack ?? error).split('\\n')[0]); }
  clearTimeout(timer);
}
console.log('\\n${MARK}' + JSON.stringify(failed));
process.exit(0);
`;

describe('the code blocks of the README and the manual', () => {
  const all = blocks();

  it('are found on the pages (the extraction itself works)', () => {
    expect(all.filter((block) => block.page === 'README.md').length).toBeGreaterThan(0);
    expect(all.filter((block) => !block.fragment).length).toBeGreaterThan(50);
  });

  it('type-check against the package as it is, imported by its public names', () => {
    expect(problems(all)).toEqual([]);
  }, 120_000);

  it('run offline to their end without an error', async () => {
    expect(await failures(all)).toEqual([]);
  }, 120_000);
});
