// The page's side of the API: every request carries the token the studio's URL gave the page.
import type { LayerTraceRecord } from '../trace-types.ts';

/** A run as the list shows it (the server's RunRow). */
export interface RunRow {
  runId: string;
  agentName: string;
  sessionId: string;
  status: 'running' | 'completed' | 'suspended' | 'failed';
  stopReason?: string;
  segment: number;
  steps: number;
  models: string[];
  tokens: { input: number; output: number; total: number };
  modelCalls: number;
  toolCalls: number;
  cost?: number;
  pendingApprovals: number;
  error?: { code: string; message: string };
  startedAt: number;
  updatedAt: number;
  durationMs: number;
  title: string;
}

/** A content part of a message, as the run state holds it. */
export type Part =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'image'; image: string; mediaType?: string }
  | { type: 'file'; data: string; mediaType: string; filename?: string };

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | Part[];
  toolCalls?: { id: string; name: string; args: unknown }[];
  toolCallId?: string;
  name?: string;
  metadata?: Record<string, unknown>;
}

/** One human decision the run keeps (the runtime's `DecisionRecord`, as the page reads it). */
export interface DecisionRecord {
  toolCallId: string;
  toolName: string;
  decision: 'approved' | 'denied';
  args: unknown;
  editedArgs?: unknown;
  reason?: string;
  actor?: { id: string; name?: string };
  surface: string;
  at: string;
  segment: number;
  path?: string[];
}

export interface RunDetail {
  row?: RunRow;
  state: { runId: string; agentName: string; status: string; messages: Message[]; pendingApprovals: Pending[]; usage: Record<string, number>; error?: { code: string; message: string }; decisionLog?: DecisionRecord[] };
  trace: LayerTraceRecord | null;
  ledger: { id: string; entry: string; toolName?: string; idempotencyKey: string }[];
}

export interface Pending {
  toolCallId: string;
  toolName: string;
  args: unknown;
  reason?: string;
  path?: string[];
}

export interface PendingRow extends Pending {
  runId: string;
  agentName: string;
  sessionId: string;
  schema?: Record<string, unknown>;
  canResume: boolean;
  decided: string[];
}

const TOKEN_KEY = 'koagent-studio-token';

/** The token: from the URL the studio printed, kept for the tab's later navigation. */
export function token(): string {
  const fromUrl = new URLSearchParams(location.search).get('token');
  if (fromUrl) sessionStorage.setItem(TOKEN_KEY, fromUrl);
  return fromUrl ?? sessionStorage.getItem(TOKEN_KEY) ?? '';
}

/** An API call: its JSON, or an Error with the server's message. */
export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`./api/${path}`, { ...init, headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), 'x-koagent-token': token(), ...init.headers } });
  const body = (await response.json().catch(() => ({}))) as T & { error?: string };
  if (!response.ok) throw Object.assign(new Error(body.error ?? `${response.status} ${response.statusText}`), { status: response.status, body });
  return body;
}

/** A link the browser follows itself (downloads, the event stream): the token goes in the query. */
export function apiUrl(path: string): string {
  return `./api/${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(token())}`;
}

export const ms = (value: number): string => (value < 10 ? `${value.toFixed(value < 1 ? 2 : 1)} ms` : value < 1000 ? `${Math.round(value)} ms` : value < 60_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.floor(value / 60_000)} min ${Math.round((value % 60_000) / 1000)} s`);
export const when = (epoch: number): string => new Date(epoch).toLocaleString();
export const show = (value: unknown): string => (value === undefined ? '—' : typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value));
