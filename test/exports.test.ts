// What each entry point exports, name by name: adding a name to koagent's surface is a decision,
// made here, not the side effect of a new module. Values are what the module holds at run time;
// types are the rest of what it exports, read by the TypeScript compiler. The root stays at 40
// names or fewer, the whole surface at 200; each name has one entry point (docs/design.md,
// "Entry points").
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { entryPoints } from './support/entry-points.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every entry point of package.json, with the values and the types it exports. */
const DECIDED: Record<string, { values: string[]; types: string[] }> = {
  'koagent': {
    values: [
      'Agent', 'InvalidOutputError', 'KoagentError', 'ProviderError', 'RunFailedError', 'ToolError',
      'createAgent', 'defineMiddleware', 'defineTool', 'deny', 'hasToolCall', 'hookState',
      'jsonSchemaInput', 'mapText', 'memoryStore', 'openai', 'registerModelPrefix', 'resolveModel',
      'stepCountIs', 'textOf', 'toolError',
    ],
    types: [
      'AgentEvent', 'AgentOptions', 'AgentStream', 'ApprovalDecision', 'GenerateOptions',
      'GenerateResult', 'Message', 'Middleware', 'ModelContext', 'ModelProvider', 'PendingApproval',
      'RunCallOptions', 'RunContext', 'RunResult', 'RunState', 'Tool', 'ToolContext', 'ToolOutcome',
    ],
  },
  'koagent/types': {
    values: [],
    types: [
      'AgentRuns', 'AssistantContentPart', 'AssistantMessage', 'AssistantToolCall',
      'BaseContext', 'CallVariables', 'ContentPart', 'DecisionRecord', 'FilePart',
      'HookState', 'ImagePart', 'JsonSchemaCheck', 'Logger',
      'MiddlewareEvents', 'OpenAIChatModel', 'PermissionRecord',
      'PermissionRule', 'ReasoningPart',
      'ResumeClaim', 'RunInput', 'RunStatus', 'RunSummary', 'RunVariables',
      'StopCondition', 'StopReason', 'StreamPart', 'SystemMessage', 'TextPart',
      'TokenUsage', 'ToolCallRecord', 'ToolContentPart', 'ToolErrorKind', 'ToolMessage',
      'ToolSpec', 'Toolset', 'Usage', 'UserMessage',
    ],
  },
  'koagent/testing': {
    values: [
      'mockModel', 'openaiCompatibleServer',
    ],
    types: [
      'MockModel', 'MockReply', 'MockToolCall', 'OpenAICompatibleServer', 'ScriptedResponse',
    ],
  },
  'koagent/hooks': {
    values: [
      'HookRegistry', 'ToolResult',
    ],
    types: [
      'AgentHook', 'GenerateHookContext', 'Hook', 'HookAction', 'HookContext', 'Maybe', 'ToolCall',
      'ToolCallHookContext', 'ToolCallHookResult',
    ],
  },
  'koagent/store': {
    values: ['followEvents', 'systemClock'],
    types: [
      'Checkpoint', 'ClaimOutcome', 'ClaimRequest', 'ClaimedRun', 'Clock', 'CreateOutcome',
      'Lease', 'LedgerCall', 'LedgerEntry', 'NewRun', 'RetentionPolicy', 'RunFilter',
      'RunStore',
    ],
  },
  'koagent/ai-sdk': {
    values: [
      'aiSdk',
    ],
    types: [
      'AiSdkLanguageModel',
    ],
  },
  'koagent/sqlite': {
    values: [
      'sqliteStore',
    ],
    types: [],
  },
  'koagent/postgres': {
    values: [
      'postgresStore',
    ],
    types: [
      'PostgresPool',
    ],
  },
  'koagent/mcp': {
    values: [
      'McpAgentServer', 'McpToolset', 'mcpTools', 'serveMcp',
    ],
    types: [],
  },
  'koagent/middleware': {
    values: [
      'TimeoutError', 'compactionMiddleware', 'contextEditingMiddleware', 'costBudgetMiddleware',
      'fileMediaStore', 'functionSchema', 'guardrailsMiddleware', 'isRetryableError',
      'loopDetectionMiddleware', 'mediaStoreMiddleware', 'memoryKeyValues', 'modelFallbackMiddleware',
      'optionsSchema', 'parseOptions', 'piiRedactionMiddleware', 'promptCachingMiddleware',
      'rateLimitMiddleware', 'responseCacheMiddleware', 'retryMiddleware', 'timeoutMiddleware',
      'todoListMiddleware', 'todosOf', 'toolCacheMiddleware', 'toolCallLimitMiddleware',
      'toolEmulatorMiddleware', 'toolSelectorMiddleware', 'wholeNumberSchema',
    ],
    types: [
      'KeyValueStore', 'MediaStore', 'ModelGuardrail', 'PriceTable', 'Todo',
    ],
  },
  'koagent/worker': {
    values: [
      'createClient', 'createWorker',
    ],
    types: [
      'LoggedEvent', 'RunReport', 'Worker', 'WorkerClient',
    ],
  },
  'koagent/studio': {
    values: [
      'startStudio',
    ],
    types: [
      'Studio',
    ],
  },
  'koagent/sandbox': {
    values: [
      'SandboxError', 'sandboxedHooks',
    ],
    types: [
      'SandboxedHooks',
    ],
  },
  'koagent/http': {
    values: [
      'createHandler',
    ],
    types: [
      'HandlerOptions', 'HttpIdentity',
    ],
  },
  'koagent/trace': {
    values: [
      'formatTrace', 'traceOf', 'traceToOtlp',
    ],
    types: [
      'LayerTraceRecord', 'TracedCall', 'TracedEffect',
      'TracedSegment',
    ],
  },
  'koagent/replay': {
    values: [
      'compareTraces', 'fixtureOf', 'fixtureTools', 'fork', 'formatComparison', 'playFixture', 'replay',
    ],
    types: [
      'ReplayReport', 'RunFixture',
    ],
  },
  'koagent/evals': {
    values: [
      'checkExamples', 'costAtMost', 'defineEvaluation', 'evaluate', 'exact', 'formatReport', 'jsonSchema',
      'junitXml', 'loadDataset', 'matches', 'modelGraded', 'stepsAtMost', 'toolCalled', 'traceEffect',
    ],
    types: [
      'EvalExample', 'EvalReport', 'Scorer',
    ],
  },
};

/** koagent's own helpers and records: what only the built-ins, the dialects or the run use. */
const INTERNAL = [
  'blame', 'failing', 'jsonOf', 'ownValue', 'setOwn', 'approvalBreach', 'ChildOutcome', 'ChildSuspension',
  'CLEARED_PLACEHOLDER', 'MEDIA_REF', 'MEDIA_TOKENS', 'TRACE_STATE', 'requestKey', 'estimateRequest', 'estimateTokens',
  'sniffMediaType', 'mediaSource', 'isUrl', 'parseDataUrl', 'keyValuesOf', 'refuseMisspellings', 'isToolset',
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
const valuesOf = async (entry: string) => Object.keys(await import(pathToFileURL(`${root}/${entryPoints[entry]}`).href));
const count = (entry: string) => DECIDED[entry].values.length + DECIDED[entry].types.length;

describe('the decided surface', () => {
  it('lists every entry point of package.json, and no other', () => {
    expect(sorted(Object.keys(DECIDED))).toEqual(sorted(Object.keys(entryPoints)));
  });

  for (const entry of Object.keys(entryPoints)) {
    it(`${entry} exports exactly its decided values, and its decided types besides them`, async () => {
      const values = await valuesOf(entry);
      expect(sorted(values)).toEqual(sorted(DECIDED[entry]?.values ?? []));
      expect(sorted(exported[entry].filter((name) => !values.includes(name)))).toEqual(sorted(DECIDED[entry]?.types ?? []));
    });
  }

  it('holds the root to 40 names and every entry point together to 200', () => {
    expect(count('koagent')).toBeLessThanOrEqual(40);
    expect(Object.keys(DECIDED).reduce((sum, entry) => sum + count(entry), 0)).toBeLessThanOrEqual(200);
  });

  it('leaves openaiCompatibleServer on koagent/testing only: nothing the root imports reaches node:http or src/testing/', () => {
    const program = ts.createProgram([`${root}src/index.ts`], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true, skipLibCheck: true, types: [] });
    const ours = program.getSourceFiles().filter((f) => f.fileName.startsWith(`${root}src/`));
    expect(ours.map((f) => f.fileName.slice(root.length)).filter((f) => f.startsWith('src/testing/'))).toEqual([]);
    expect(ours.filter((f) => /from '(node:)?https?'/.test(f.text)).map((f) => f.fileName.slice(root.length))).toEqual([]);
    expect(ours.length).toBeGreaterThan(20);
  }, 60_000);

  it('gives each name one entry point', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const [entry, names] of Object.entries(exported)) {
      for (const name of names) {
        if (seen.has(name)) twice.push(`${name}: ${seen.get(name)} and ${entry}`);
        seen.set(name, entry);
      }
    }
    expect(twice).toEqual([]);
  });

  it("keeps the agent's administration seam and the replay record off every entry point", () => {
    const everywhere = new Set(Object.values(exported).flat());
    expect(['ADMIN', 'adminOf', 'AgentAdmin', 'Playback', 'forkState', 'REPLAY_STATE', 'replayRecordOf'].filter((name) => everywhere.has(name))).toEqual([]);
  });

  it('holds koagent/replay and koagent/evals together to 28 names: the functions users call and the records they name', () => {
    expect(count('koagent/replay') + count('koagent/evals')).toBeLessThanOrEqual(28);
  });

  it('koagent/types holds types only', async () => {
    expect(await valuesOf('koagent/types')).toEqual([]);
  });

  it("keeps koagent's internal helpers and records off every entry point", () => {
    const everywhere = new Set(Object.values(exported).flat());
    expect(INTERNAL.filter((name) => everywhere.has(name))).toEqual([]);
  });

  it('are all in the API reference (TypeDoc builds one page for each)', async () => {
    const { default: typedoc } = (await import(pathToFileURL(`${root}/typedoc.config.mjs`).href)) as { default: { entryPoints: string[] } };
    expect(sorted(typedoc.entryPoints)).toEqual(sorted(Object.values(entryPoints)));
  });
});
