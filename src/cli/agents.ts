// The agents a command resumes runs with: the koagent agents a module of the user's exports
// (TypeScript modules through tsx, when it is installed).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Agent } from '../agent/agent.js';
import { CliError, EXIT } from './io.js';

/** What the CLI calls on an agent: its name, its resume and its runs' recover (and its tools, to check edited arguments, when it has them). */
export type CliAgent = Pick<Agent, 'name' | 'resume'> & { runs: Pick<Agent['runs'], 'recover'> } & Partial<Pick<Agent, 'tools'>>;

const isAgent = (value: unknown): value is CliAgent =>
  typeof value === 'object' && value !== null && typeof (value as CliAgent).name === 'string' && typeof (value as CliAgent).resume === 'function' && typeof (value as CliAgent).runs?.recover === 'function';

/** The exports of the user's `module` (a path from the working directory), TypeScript through tsx when it is installed; `flag` names it in errors. */
export async function importModule(module: string, flag: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(resolve(module)).href;
  try {
    return /\.[cm]?tsx?$/.test(module) ? await importTypeScript(url) : ((await import(url)) as Record<string, unknown>);
  } catch (error) {
    throw new CliError(EXIT.failure, `${flag} ${module} could not be loaded: ${(error as Error).message}`);
  }
}

/** The agents `module` exports (directly, or in an exported object or array, the default export included). */
export async function loadAgents(module: string): Promise<CliAgent[]> {
  const exports = await importModule(module, '--agents');
  const found = new Set<CliAgent>();
  for (const value of Object.values(exports)) {
    if (isAgent(value)) found.add(value);
    else if (typeof value === 'object' && value !== null) for (const inner of Object.values(value)) if (isAgent(inner)) found.add(inner);
  }
  if (found.size === 0) throw new CliError(EXIT.usage, `--agents ${module} exports no koagent agent (export the agents made with createAgent)`);
  return [...found];
}

async function importTypeScript(url: string): Promise<Record<string, unknown>> {
  const tsx = (await import('tsx/esm/api' as string).catch(() => undefined)) as { tsImport?: (specifier: string, parent: string) => Promise<Record<string, unknown>> } | undefined;
  if (tsx?.tsImport !== undefined) return tsx.tsImport(url, import.meta.url);
  return (await import(url)) as Record<string, unknown>;
}

/** The agent of `agentName` among `agents`, or a usage error naming those there are. */
export function agentFor(agents: readonly CliAgent[], agentName: string): CliAgent {
  const agent = agents.find((a) => a.name === agentName);
  if (agent === undefined) throw new CliError(EXIT.usage, `the run belongs to agent "${agentName}", which --agents does not export (it exports ${agents.map((a) => `"${a.name}"`).join(', ')})`);
  return agent;
}
