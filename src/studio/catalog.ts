// The runs as the studio lists them: each store summary with what the list shows beside it
// (tokens, models, duration, a line of its text), read from the run's state once per change and
// kept until the run changes again, so a list or a live poll loads only the runs that moved.
import type { Message, RunState, RunStatus, StopReason } from '../api.js';
import type { RunFilter, RunStore, RunSummary } from '../stores/run-store.js';
import { traceOf } from '../features/layer-trace/record.js';

/**
 * One run as the studio's list shows it.
 *
 * @example const rows: RunRow[] = await (await fetch(`${url}api/runs?status=running`, { headers })).json();
 */
export interface RunRow {
  runId: string;
  agentName: string;
  sessionId: string;
  status: RunStatus;
  stopReason?: StopReason;
  segment: number;
  steps: number;
  /** The models the run asked, from its layer trace (or the cost budget's record); empty when neither names one. */
  models: string[];
  tokens: { input: number; output: number; total: number };
  modelCalls: number;
  toolCalls: number;
  /** In US dollars, where known: what the cost budget middleware counted (`usage.cost`, sub-agents' included); absent without it. */
  cost?: number;
  pendingApprovals: number;
  error?: { code: string; message: string };
  /** Epoch ms, by the store's clock. */
  startedAt: number;
  updatedAt: number;
  /** Until its last change (a running run: until now). */
  durationMs: number;
  /** The run's first user message, cut short. */
  title: string;
  /** The run this one was forked from, and after which step (`fork` of `koagent/replay`). */
  forkedFrom?: { runId: string; step: number };
}

/** What a list request filters by: the store's own filters, and text matched in the run. */
export interface RowFilter {
  agent?: string;
  status?: RunStatus[];
  session?: string;
  text?: string;
  limit?: number;
}

interface Cached {
  key: string;
  row: RunRow;
  /** The run's text, lower case, for the text filter. */
  haystack: string;
}

const HAYSTACK_LIMIT = 50_000;

/** The change key of a summary: a run whose key is unchanged needs no new read. */
export function changeKey(summary: RunSummary): string {
  return `${summary.updatedAt}|${summary.status}|${summary.segment}|${summary.steps}|${summary.pendingApprovals.length}`;
}

function textOfContent(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' || part.type === 'reasoning' ? part.text : '')).join(' ');
}

/** The hook state the cost budget middleware keeps its dollars per model in. */
const COST_STATE = 'cost-budget';

/**
 * The models the run asked: those its layer trace names (each model call's model id, or its
 * provider's name), else those the cost budget priced (`hookState['cost-budget'].byModel`).
 */
function models(state: RunState): string[] {
  const traced = (traceOf(state)?.calls ?? []).flatMap((call) => (call.kind === 'model' ? [call.model ?? call.provider].filter((m): m is string => m !== undefined) : []));
  if (traced.length > 0) return [...new Set(traced)];
  const priced = state.hookState[COST_STATE] as { byModel?: Record<string, unknown> } | undefined;
  return typeof priced?.byModel === 'object' && priced.byModel !== null ? Object.keys(priced.byModel) : [];
}

/**
 * A store's runs with their list rows, read from each run's state when it changed.
 *
 * @example const rows = await new RunCatalog(store).rows({ status: ['suspended'] });
 */
export class RunCatalog {
  readonly #store: RunStore;
  readonly #cache = new Map<string, Cached>();

  constructor(store: RunStore) {
    this.#store = store;
  }

  /** The rows `filter` names, the latest change first. */
  async rows(filter: RowFilter = {}): Promise<RunRow[]> {
    const storeFilter: RunFilter = { limit: filter.limit ?? 200 };
    if (filter.agent) storeFilter.agentName = filter.agent;
    if (filter.session) storeFilter.sessionId = filter.session;
    if (filter.status && filter.status.length > 0) storeFilter.status = filter.status;
    const summaries = await this.#store.listRuns(storeFilter);
    const cached = await Promise.all(summaries.map((summary) => this.entry(summary)));
    const text = filter.text?.trim().toLowerCase();
    return cached.filter((entry): entry is Cached => entry !== undefined && (!text || entry.haystack.includes(text))).map((entry) => entry.row);
  }

  /** The row of one summary, read from the store only when the run changed since it was last read. */
  async entry(summary: RunSummary): Promise<Cached | undefined> {
    const key = changeKey(summary);
    const known = this.#cache.get(summary.runId);
    if (known?.key === key) return { ...known, row: withDuration(known.row) };
    let state: RunState | undefined;
    try {
      state = await this.#store.loadRun(summary.runId);
    } catch {
      state = undefined; // a run whose rows cannot be read is still listed, from its summary
    }
    const fresh = build(summary, state, key);
    this.#cache.set(summary.runId, fresh);
    return fresh;
  }

  /** Forget a run (it was deleted). */
  forget(runId: string): void {
    this.#cache.delete(runId);
  }
}

function withDuration(row: RunRow): RunRow {
  return row.status === 'running' ? { ...row, durationMs: Math.max(0, Date.now() - row.startedAt) } : row;
}

function build(summary: RunSummary, state: RunState | undefined, key: string): Cached {
  const usage = state?.usage;
  const firstUser = state?.messages.find((m) => m.role === 'user');
  const title = firstUser === undefined ? '' : textOfContent(firstUser.content).slice(0, 140);
  const row: RunRow = {
    runId: summary.runId,
    agentName: summary.agentName,
    sessionId: summary.sessionId,
    status: summary.status,
    ...(summary.stopReason !== undefined ? { stopReason: summary.stopReason } : {}),
    segment: summary.segment,
    steps: summary.steps,
    models: state ? models(state) : [],
    tokens: { input: usage?.inputTokens ?? 0, output: usage?.outputTokens ?? 0, total: usage?.totalTokens ?? 0 },
    modelCalls: usage?.modelCalls ?? 0,
    toolCalls: usage?.toolCalls ?? 0,
    ...(typeof usage?.cost === 'number' ? { cost: usage.cost } : {}),
    pendingApprovals: summary.pendingApprovals.length,
    ...(summary.error ? { error: { code: summary.error.code, message: summary.error.message } } : {}),
    startedAt: summary.createdAt,
    updatedAt: summary.updatedAt,
    durationMs: Math.max(0, summary.updatedAt - summary.createdAt),
    title,
    ...(state?.forkedFrom === undefined ? {} : { forkedFrom: state.forkedFrom }),
  };
  let haystack = `${summary.runId} ${summary.agentName} ${summary.sessionId} `;
  for (const message of state?.messages ?? []) {
    if (haystack.length > HAYSTACK_LIMIT) break;
    haystack += `${textOfContent(message.content)} `;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) haystack += `${call.name} `;
  }
  return { key, row: withDuration(row), haystack: haystack.toLowerCase() };
}
