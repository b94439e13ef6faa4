// What the published package holds and what a project that installs it gets: the tarball `npm
// pack` makes is unpacked into a project of its own, beside its dependencies and nothing else of
// this repository, and a program using the main APIs (test/consumer/program.ts) is compiled
// against it with the strictest options and a Node project's libraries (no DOM), under nodenext
// and under bundler resolution; a second project with zod alone beside it compiles a program of
// the root and koagent/sandbox; the package is then loaded with `require()`, and the README's
// quick start runs in a project set up by its own commands.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'koagent-pack-'));
const stage = join(work, 'stage');
const project = join(work, 'project');
const bare = join(work, 'bare');
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Packed { filename: string; unpackedSize: number; files: { path: string; size: number }[] }
let packed: Packed;

// Build into a staging copy of the package (the repository's own dist/ is left alone), pack it,
// and unpack the tarball as node_modules/koagent of a fresh project. Its dependencies are links to
// this repository's copies: only the packages koagent names (dependencies and peers) and Node's
// types, so a declaration that needs anything else (a driver's @types) fails to compile.
beforeAll(async () => {
  mkdirSync(stage, { recursive: true });
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) copyFileSync(join(root, file), join(stage, file));
  await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')], { cwd: root });
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: stage, env: { ...process.env, npm_config_update_notifier: 'false' } });
  [packed] = JSON.parse(stdout) as Packed[];
  await install(project, [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies), '@types/node']);
  copyFileSync(join(root, 'test/consumer/program.ts'), join(project, 'src/program.ts'));
  // A second project with zod alone beside koagent's own dependencies: no optional peer installed.
  await install(bare, [...Object.keys(pkg.dependencies), 'zod', '@types/node']);
  writeFileSync(join(bare, 'src/program.ts'), [
    "import { z } from 'zod';",
    "import { createAgent, defineTool, memoryStore } from 'koagent';",
    "import type { AgentHook } from 'koagent/hooks';",
    "import { mockModel } from 'koagent/testing';",
    "import { sandboxedHooks, SandboxError } from 'koagent/sandbox';",
    "const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ text: z.string() }), execute: ({ text }) => text });",
    "const audit: AgentHook = { name: 'audit', postToolCall(ctx) { console.log(ctx.toolName); } };",
    "export const agent = createAgent({ model: mockModel(['ok']), tools: [echo], hooks: [audit], store: memoryStore() });",
    "export const sandboxed = async (source: string) => createAgent({ model: mockModel(['ok']), hooks: (await sandboxedHooks(source, { timeoutMs: 100 })).hooks });",
    "export const overTime = (error: unknown) => error instanceof SandboxError && error.limit === 'timeoutMs';",
  ].join('\n'));
}, 180_000);

/** A project with the tarball unpacked as node_modules/koagent and links to this repository's copies of `packages`. */
async function install(dir: string, packages: string[]): Promise<void> {
  await unpack(dir, packages);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  mkdirSync(join(dir, 'src'));
}

/** The tarball as node_modules/koagent of `dir`, and links to this repository's copies of `packages`. */
async function unpack(dir: string, packages: string[]): Promise<void> {
  const installed = join(dir, 'node_modules', 'koagent');
  mkdirSync(installed, { recursive: true });
  await run('tar', ['-xzf', join(work, packed.filename), '-C', installed, '--strip-components=1']);
  for (const name of packages) {
    mkdirSync(dirname(join(dir, 'node_modules', name)), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
  }
}

/** The compile errors of a project's program and of koagent's declarations (other packages' own are theirs). */
function compileErrors(resolution: 'nodenext' | 'bundler', dir = project): string[] {
  return compile(resolution, dir).errors;
}

/** Compile a project's program: its errors (see compileErrors), and the packages whose declarations it took in. */
function compile(resolution: 'nodenext' | 'bundler', dir = project): { errors: string[]; packages: string[] } {
  // A Node project's libraries: ES2023 and Node's types, no DOM (which would declare WebAssembly, fetch and the like).
  const strictest = { strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, skipLibCheck: false, noEmit: true, target: 'es2022', lib: ['es2023'], types: ['node'] };
  const options = resolution === 'nodenext' ? { module: 'nodenext', moduleResolution: 'nodenext' } : { module: 'esnext', moduleResolution: 'bundler' };
  const configFile = join(dir, `tsconfig.${resolution}.json`);
  writeFileSync(configFile, JSON.stringify({ compilerOptions: { ...strictest, ...options }, include: ['src'] }, null, 2));
  const config = ts.getParsedCommandLineOfConfigFile(configFile, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
  if (config === undefined) throw new Error(`cannot read ${configFile}`);
  const program = ts.createProgram(config.fileNames, config.options);
  // The dependencies are links, so their files lie outside the project: only the program and
  // koagent's declarations are checked (what skipLibCheck: false checks of them, at a tenth of the time).
  const ours = program.getSourceFiles().filter((file) => !relative(dir, file.fileName).startsWith('..'));
  const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...ours.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])];
  const packages = new Set(program.getSourceFiles().map((file) => /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file.fileName)?.[1]).filter((name) => name !== undefined));
  return { errors: diagnostics.map((d) => `${d.file ? relative(dir, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`), packages: [...packages].sort() };
}

describe('the package', () => {
  it('ships the MIT licence its package.json names, and says where its repository is', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(pkg.files).toContain('LICENSE');
    expect(pkg.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/\.git$/) });
  });

  it('holds the code and its declarations without source maps, which would more than double it (under 2 MB unpacked, with koagent/worker, koagent/http, the studio page, the sandbox, the built-in middleware, koagent/replay and koagent/evals)', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'LICENSE', 'README.md', 'package.json']));
    expect(paths.filter((p) => p.endsWith('.map'))).toEqual([]);
    expect(packed.unpackedSize).toBeLessThan(2_000_000);
  });

  it('has the koagent bin: the built CLI, a node script', () => {
    expect(pkg.bin).toEqual({ koagent: './dist/cli/main.js' });
    expect(packed.files.map((f) => f.path)).toContain('dist/cli/main.js');
    expect(readFileSync(join(stage, 'dist/cli/main.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('keeps built tarballs out of git', () => {
    expect(readFileSync(join(root, '.gitignore'), 'utf8').split('\n')).toContain('*.tgz');
  });
});

describe('a project that installs the package', () => {
  // program.ts uses the agent, tools, middleware (with the fields features declare: holdStream,
  // scope), both hook dialects, the stores, an AI SDK model (MockLanguageModelV3), MCP and
  // mockModel, and holds `@ts-expect-error`s for misuse the types must refuse.
  it('compiles a program using the main APIs under nodenext resolution, strictest options, declarations checked', () => {
    const { errors, packages } = compile('nodenext');
    expect(errors).toEqual([]);
    // koagent/sandbox's declarations are koagent's own: quickjs-emscripten's (which need the DOM
    // library, where a Node project has none) are not part of the program.
    expect(packages).toContain('koagent');
    expect(packages.filter((name) => /quickjs|^@jitl\//.test(name))).toEqual([]);
  }, 60_000);

  it('compiles the same program under bundler resolution', () => {
    expect(compileErrors('bundler')).toEqual([]);
  }, 60_000);

  // koagent/sandbox among them: its declarations are koagent's own, none of quickjs-emscripten's.
  it('compiles a program of the root, koagent/hooks, koagent/testing and koagent/sandbox with zod alone installed beside koagent (no optional peer)', () => {
    expect(compileErrors('nodenext', bare)).toEqual([]);
  }, 60_000);

  it(`loads with require(), every entry point, on the Node versions engines names (${pkg.engines.node}), through require(esm)`, async () => {
    const entries = Object.keys(pkg.exports).filter((e) => e !== './package.json').map((e) => e.replace(/^\./, 'koagent'));
    const script = `process.stdout.write(JSON.stringify(${JSON.stringify(entries)}.map((e) => [e, typeof require(e)])));`;
    const { stdout } = await run(process.execPath, ['--no-warnings', '--input-type=commonjs', '-e', script], { cwd: project });
    expect(JSON.parse(stdout)).toEqual(entries.map((e) => [e, 'object']));
    const { stdout: root } = await run(process.execPath, ['--no-warnings', '--input-type=commonjs', '-e', "process.stdout.write(typeof require('koagent').createAgent)"], { cwd: project });
    expect(root).toBe('function');
  });
});

describe("the README's quick start", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
  const commands = /```sh\n([\s\S]*?)```/.exec(section)![1].split('\n').map((line) => line.replace(/#.*/, '').trim()).filter(Boolean);
  const code = /```ts\n([\s\S]*?)```/.exec(section)![1];
  const file = /Save this as `([^`]+)`/.exec(section)![1];

  it('runs, as the README says, in a project that npm init -y made (CommonJS by default)', async () => {
    const dir = join(work, 'quick-start');
    mkdirSync(dir);
    const npm = { cwd: dir, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_offline: 'true' } };
    const installs: string[] = [];
    expect(commands[0]).toBe('npm init -y');
    for (const command of commands) {
      // The packages to install are linked (koagent: the packed tarball): no network here.
      if (command.startsWith('npm install ')) installs.push(...command.split(/\s+/).slice(2).filter((arg) => !arg.startsWith('-')));
      else await run('sh', ['-c', command], npm);
    }
    expect(installs).toEqual(['koagent', 'zod', 'tsx']);
    await unpack(dir, [...Object.keys(pkg.dependencies), 'zod']);
    writeFileSync(join(dir, file), code);
    const { stdout } = await run(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), file], { cwd: dir });
    expect(stdout).toContain('Sunny in Paris.');
  }, 60_000);
});

describe('the lockfile', () => {
  it('has no runtime dependency, direct or indirect, that npm marked deprecated when it was installed', () => {
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; deprecated?: string; version?: string }> };
    const deprecated = Object.entries(lock.packages).filter(([, entry]) => entry.dev !== true && entry.deprecated !== undefined).map(([path, entry]) => `${path}@${entry.version}: ${entry.deprecated}`);
    expect(deprecated).toEqual([]);
  });
});
