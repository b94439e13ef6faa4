// What the package root exports, name by name: adding a name to `koagent` is a decision, made
// here, not the side effect of a new module. Values are what the module holds at run time;
// types are the rest of what it exports, read by the TypeScript compiler. The root stays at 70
// names or fewer; everything else has an entry point named for the code that needs it
// (docs/design.md, "Entry points").
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { entryPoints } from './support/entry-points.js';

const root = fileURLToPath(new URL('..', import.meta.url));

const ROOT_VALUES = [
  'Agent',
  'compactionMiddleware',
  'createAgent',
  'defineMiddleware',
  'defineTool',
  'deny',
  'estimateTokens',
  'fileMediaStore',
  'hasToolCall',
  'HookRegistry',
  'InvalidOutputError',
  'isRetryableError',
  'isToolset',
  'jsonSchemaInput',
  'KoagentError',
  'mapText',
  'mediaStoreMiddleware',
  'memoryStore',
  'openai',
  'ProviderError',
  'registerModelPrefix',
  'resolveModel',
  'retryMiddleware',
  'RunFailedError',
  'stepCountIs',
  'textOf',
  'timeoutMiddleware',
  'TimeoutError',
  'toolError',
  'ToolError',
  'ToolResult',
];

const ROOT_TYPES = [
  'AgentEvent',
  'AgentHook',
  'AgentOptions',
  'AgentStream',
  'ApprovalDecision',
  'CompactionOptions',
  'GenerateHookContext',
  'GenerateOptions',
  'GenerateResult',
  'Hook',
  'HookAction',
  'HookContext',
  'Maybe',
  'MediaStore',
  'MediaStoreOptions',
  'MemoryStoreOptions',
  'Message',
  'Middleware',
  'ModelContext',
  'ModelProvider',
  'OpenAIProviderOptions',
  'PendingApproval',
  'RetryOptions',
  'RunCallOptions',
  'RunContext',
  'RunResult',
  'RunState',
  'TimeoutOptions',
  'Tool',
  'ToolCall',
  'ToolCallHookContext',
  'ToolCallHookResult',
  'ToolContext',
  'ToolDefinition',
  'ToolOutcome',
];

const sorted = (names: Iterable<string>) => [...names].sort();

/** Every name each entry point exports, values and types, as the compiler sees the module. */
function exportedNames(): Record<string, string[]> {
  const files = Object.fromEntries(Object.entries(entryPoints).map(([name, source]) => [name, `${root}/${source}`]));
  const program = ts.createProgram(Object.values(files), { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  return Object.fromEntries(Object.entries(files).map(([name, file]) => [name, checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!).map((symbol) => symbol.name)]));
}

const exported = exportedNames();

describe('the package root', () => {
  it('exports exactly these values', async () => {
    expect(sorted(Object.keys(await import('../src/index.js')))).toEqual(sorted(ROOT_VALUES));
  });

  it('exports exactly these types besides them', async () => {
    const values = new Set(Object.keys(await import('../src/index.js')));
    expect(sorted(exported.koagent.filter((name) => !values.has(name)))).toEqual(sorted(ROOT_TYPES));
  });

  it('holds at most 70 names', () => {
    expect(exported.koagent.length).toBe(ROOT_VALUES.length + ROOT_TYPES.length);
    expect(exported.koagent.length).toBeLessThanOrEqual(70);
  });
});

describe('the other entry points', () => {
  it('give each type one home: the root, koagent/types or koagent/store', () => {
    const homes = ['koagent', 'koagent/types', 'koagent/store'];
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const home of homes) {
      for (const name of exported[home]) {
        if (seen.has(name)) twice.push(`${name}: ${seen.get(name)} and ${home}`);
        seen.set(name, home);
      }
    }
    expect(twice).toEqual([]);
  });

  it('koagent/trace exports the record\'s reader, its text for a terminal and its OTLP export', async () => {
    expect(sorted(Object.keys(await import('../src/trace.js')))).toEqual(sorted(['TRACE_STATE', 'formatTrace', 'traceOf', 'traceToOtlp']));
  });

  it('koagent/replay exports fork, replay, the trace comparison and fixtures, and the agent\'s administration seam is on no entry point', async () => {
    expect(sorted(Object.keys(await import('../src/replay.js')))).toEqual(sorted(['REPLAY_STATE', 'compareTraces', 'fixtureOf', 'fixtureTools', 'fork', 'formatComparison', 'playFixture', 'replay', 'replayRecordOf']));
    const everywhere = new Set(Object.values(exported).flat());
    expect(['ADMIN', 'adminOf', 'AgentAdmin', 'Playback', 'forkState'].filter((name) => everywhere.has(name))).toEqual([]);
  });

  it('koagent/types holds types only', async () => {
    expect(Object.keys(await import('../src/types.js'))).toEqual([]);
  });

  it('keep koagent\'s internal helpers and records off every entry point', () => {
    const everywhere = new Set(Object.values(exported).flat());
    expect(['blame', 'ChildOutcome', 'ChildSuspension'].filter((name) => everywhere.has(name))).toEqual([]);
  });

  it('are all in the API reference (TypeDoc builds one page for each)', async () => {
    const { default: typedoc } = (await import(pathToFileURL(`${root}/typedoc.config.mjs`).href)) as { default: { entryPoints: string[] } };
    expect(sorted(typedoc.entryPoints)).toEqual(sorted(Object.values(entryPoints)));
  });
});
