// The API reference (`npm run docs`, into docs/api/): the README as its landing page, one module
// per entry point named as users import it (`@module` in each entry file), categories from the
// `@category` tags (typedoc-export-categories.mjs), the guides of docs/ as documents, and links
// to the source at the commit built (TypeDoc finds it with git in a clone; a git worktree, whose
// `.git` is a file, gets no links). A warning fails the build (test/docs/api-reference.test.ts).

/**
 * Headings keep their inline code in their anchors, as GitHub makes them
 * ("## Errors (`ProviderError`)" is `#errors-providererror`), so the guides' links work on GitHub
 * and in the reference alike. TypeDoc makes an anchor from a heading's text tokens only: each code
 * span of a heading becomes a token of its own that holds its text and renders as code.
 *
 * @param {any} parser TypeDoc's markdown-it instance
 */
function headingCodeInAnchors(parser) {
  parser.core.ruler.push('koagent_heading_code', (state) => {
    state.tokens.forEach((token, i) => {
      if (token.type !== 'inline' || state.tokens[i - 1]?.type !== 'heading_open') return;
      token.children = token.children.map((child) => {
        if (child.type !== 'code_inline') return child;
        const code = new state.Token('koagent_heading_code', 'code', 0);
        const text = new state.Token('text', '', 0);
        text.content = code.content = child.content;
        code.children = [text];
        return code;
      });
    });
  });
  parser.renderer.rules.koagent_heading_code = (tokens, idx) => `<code>${parser.utils.escapeHtml(tokens[idx].content)}</code>`;
}

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: 'koagent',
  entryPoints: [
    'src/index.ts',
    'src/types.ts',
    'src/hooks.ts',
    'src/store.ts',
    'src/testing/index.ts',
    'src/providers/ai-sdk.ts',
    'src/sqlite.ts',
    'src/postgres.ts',
    'src/mcp/index.ts',
    'src/worker.ts',
    'src/middleware.ts',
    'src/studio.ts',
    'src/sandbox.ts',
    'src/trace.ts',
    'src/http.ts',
    'src/replay.ts',
    'src/evals.ts'
  ],
  tsconfig: 'tsconfig.build.json',
  out: 'docs/api',
  readme: 'README.md',
  excludePrivate: true,
  excludeInternal: true,
  treatWarningsAsErrors: true,
  validation: {
    notExported: true,
    invalidLink: true,
    notDocumented: true
  },
  githubPages: false,
  disableSources: false,
  requiredToBeDocumented: [
    'Enum',
    'Variable',
    'Function',
    'Class',
    'Interface',
    'TypeAlias',
    'Method',
    'Accessor'
  ],
  intentionallyNotExported: [
    'EventBase',
    'MiddlewareEvent',
    'AnyPart',
    'AnyFinish',
    'V2Usage',
    'V3Usage',
    'ExtensionShape',
    'NestedRunRecord',
    'NestedRun',
    // Shapes inside a value a user reads, named where they are read rather than exported.
    'WorkerCounts',
    'ScriptedReply',
    'PiiMatch',
    // Records read from the type that holds them (`AgentRuns`, `Hook`, `AgentHook`, `Checkpoint`,
    // `TracedCall` …), kept off the entry points to hold the surface to what users name.
    'AdoptedRun', 'RecoverableRun', 'RecoveredRun', 'FinishReason', 'ProviderOptions', 'SideRequest',
    'EmittedEvent', 'SubagentInfo', 'ToolFailure', 'InputGuardrail', 'OutputGuardrail', 'OutputSpec',
    'HookMessage', 'HookRunState', 'SegmentOutcome', 'PreToolCallOutcome', 'PostToolCallOutcome',
    'CheckpointCall', 'QuarantinedRun', 'StoreStats', 'JsonChange', 'TracedLayer', 'OtlpTraces',
    // The run store with its event log (what memoryStore() and the others give), the HTTP
    // handler, and the workers' client as the handler takes it: read where they are used.
    'EventLogStore',
    'KoagentHandler',
    'HttpQueue',
    // What a scorer is given: read as `Parameters<Scorer>[0]`, documented with `Scorer`.
    'EvalRun'
  ],
  projectDocuments: [
    'docs/*.md'
  ],
  sourceLinkTemplate: 'https://github.com/koagent/koagent/blob/{gitRevision}/{path}#L{line}',
  categorizeByGroup: false,
  navigation: {
    includeCategories: true,
    includeGroups: false,
    includeFolders: false
  },
  categoryOrder: [
    'Agent',
    'Tools',
    'Middleware',
    'Hooks',
    'Stores',
    'Providers',
    'Testing',
    '*'
  ],
  defaultCategory: 'Other',
  plugin: ['./typedoc-export-categories.mjs'],
  markdownItLoader: headingCodeInAnchors,
  // TypeDoc's own list, and the languages of the workers guide's deployment and SQL blocks.
  highlightLanguages: ['bash', 'console', 'css', 'html', 'javascript', 'json', 'jsonc', 'json5', 'yaml', 'tsx', 'typescript', 'sql', 'dockerfile'],
};
