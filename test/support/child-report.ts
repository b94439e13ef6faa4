// A second Node process that runs a TypeScript script and prints its report as JSON on its last
// line: what tests use to check that a run resumed in another process ends as it does here.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** Run `script` (through tsx, from the project's root) with `args`; resolves with its exit code and the JSON of its last line of output. */
export function childRun(script: string, args: string[]): Promise<{ exitCode: number | null; report: Record<string, any> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      try {
        resolve({ exitCode, report: JSON.parse(out.trim().split('\n').at(-1)!) });
      } catch {
        reject(new Error(`the child printed no report (exit ${exitCode}):\n${out}\n${err}`));
      }
    });
  });
}

/** The report alone of `childRun(script, args)`. */
export async function childReport(script: string, args: string[]): Promise<Record<string, any>> {
  return (await childRun(script, args)).report;
}
