// Shared by the AgentHook dialect's tests: real tools (defineTool) that record what they were
// called with, and a listener that keeps a run's events. Nothing in the runtime is mocked.
import { z } from 'zod';
import { defineTool, type AgentEvent, type Message } from '../../../src/index.js';
import type { ToolMessage } from '../../../src/types.js';

/** `search({ query, limit? })`, recording the arguments of every execution. */
export function searchTool(options: { needsApproval?: boolean } = {}) {
  const calls: { query: string; limit?: number }[] = [];
  const tool = defineTool({
    name: 'search',
    description: 'Search the docs',
    input: z.object({ query: z.string(), limit: z.number().optional() }),
    needsApproval: options.needsApproval,
    execute(args) {
      calls.push(args);
      return `found ${args.query} (limit ${args.limit ?? 'none'})`;
    },
  });
  return { tool, calls };
}

/** A tool that always throws, so calls to it settle with an `execution` error. */
export const brokenTool = defineTool({
  name: 'broken',
  description: 'Always fails',
  input: z.object({}),
  execute() {
    throw new Error('disk on fire');
  },
});

/** Keep every event of the runs it listens to. */
export function eventLog(): {
  events: AgentEvent[];
  onEvent: (event: AgentEvent) => void;
  ofType: <T extends AgentEvent['type']>(type: T) => Extract<AgentEvent, { type: T }>[];
} {
  const events: AgentEvent[] = [];
  return { events, onEvent: (event) => void events.push(event), ofType: (type) => events.filter((e) => e.type === type) as never };
}

/** The tool messages of a transcript, in order. */
export function toolResults(messages: readonly Message[]): ToolMessage[] {
  return messages.filter((m): m is ToolMessage => m.role === 'tool');
}

/** A scripted turn that calls one tool, for mockModel. */
export const callTool = (name: string, args: Record<string, unknown> = {}, id?: string) => ({ toolCalls: [{ name, args, ...(id !== undefined ? { id } : {}) }] });
