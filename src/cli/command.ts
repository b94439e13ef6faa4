// The `koagent` command's dispatch: operate the runs of a run store from a terminal (`koagent runs …`),
// evaluate an agent with a gate (`koagent eval`) and open the studio on a store (`koagent studio`). Exit codes are documented in docs/cli.md.
import { readFileSync } from 'node:fs';
import { CliError, EXIT, parse, type Io } from './io.js';
import { runsCommand, RUNS_USAGE } from './runs.js';
import { evalCommand, EVAL_USAGE } from './eval.js';
import { openQueue, openStore } from './stores.js';
import { loadAgents } from './agents.js';

/** The package's own package.json: two folders up, from the sources (src/cli) and from the build (dist/cli) alike. */
function packageJson(): { version: string; repository?: { url?: string } | string } {
  return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; repository?: { url?: string } | string };
}

/** Where docs/cli.md is read: the repository's page of it (the package ships no docs). */
function docsLink(): string {
  const { repository } = packageJson();
  const url = (typeof repository === 'string' ? repository : repository?.url) ?? '';
  const web = url.replace(/^git\+/, '').replace(/\.git$/, '');
  return /^https:\/\//.test(web) ? `${web}/blob/main/docs/cli.md` : 'docs/cli.md in the koagent repository';
}

function usage(): string {
  return `koagent: operate the runs of a run store, and evaluate agents with a gate.

Usage:
${RUNS_USAGE}
${EVAL_USAGE}
  koagent studio --store <file|url> [--port <n>] [--host 127.0.0.1] [--agents <module>] [--queue <postgres url>]
  koagent --version

Exit codes: 0 ok, 1 failure, 2 usage error, 3 not found, 4 refused.
The manual: ${docsLink()}`;
}

/** Run the command `argv` (without node and the script), writing to `io`; resolves to its exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      io.out(usage());
      return command === undefined ? EXIT.usage : EXIT.ok;
    }
    if (command === '--version' || command === '-v' || command === 'version') {
      if (rest.length > 0) throw new CliError(EXIT.usage, `${command} takes nothing after it, got ${rest.join(' ')}`);
      io.out(packageJson().version);
      return EXIT.ok;
    }
    if (command === 'runs') return await runsCommand(rest, io);
    if (command === 'studio') return await studio(rest, io);
    if (command === 'eval') return await evalCommand(rest, io);
    throw new CliError(EXIT.usage, `unknown command "${command}"; try \`koagent runs ls --store runs.db\` or \`koagent help\``);
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`koagent: ${error.message}`);
      return error.code;
    }
    io.err(`koagent: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failure;
  }
}

/** The studio's server module, written beside the CLI; a computed path, so the CLI builds without it. */
const STUDIO_MODULE = ['..', 'studio', 'server.js'].join('/');

interface StudioModule {
  startStudio(options: { store: unknown; host: string; port: number; agents: readonly unknown[]; queue?: unknown }): Promise<{ url: string; close(): Promise<void> | void }>;
}

async function studio(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parse(argv, { store: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, agents: { type: 'string' }, queue: { type: 'string' } });
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(EXIT.usage, `--port must be a port number (0 to 65535), got ${values.port}`);
  let server: StudioModule;
  try {
    server = (await import(STUDIO_MODULE)) as StudioModule;
  } catch (error) {
    throw new CliError(EXIT.failure, `the studio is not part of this build (${STUDIO_MODULE} could not be loaded: ${(error as Error).message})`);
  }
  const agents = values.agents === undefined ? [] : await loadAgents(values.agents);
  // With the workers' queue, answers go there, and the runs are read from the queue's database unless --store says otherwise.
  const queue = values.queue === undefined ? undefined : await openQueue(values.queue, values.store);
  const store = queue?.store ?? (await openStore(values.store));
  const { url, close } = await server.startStudio({ store, host: values.host ?? '127.0.0.1', port, agents, ...(queue === undefined ? {} : { queue }) });
  io.out(`koagent studio: ${url}${queue === undefined ? '' : ' (approvals go to the workers\' queue)'}`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await close();
  if (queue === undefined) await store.close();
  else await queue.close();
  return EXIT.ok;
}
