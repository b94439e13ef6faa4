// What `import 'koagent'` costs a program: the time to load and evaluate the package root in a
// fresh Node process, beside its two dependencies every program loads with it (zod, a peer, and
// @opentelemetry/api). Each import runs in its own process, the processes interleaved round by
// round so a busy machine slows all of them alike; the median of the rounds is printed.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROUNDS = 21;
const root = new URL('../src/index.js', import.meta.url).href;
const targets: [string, string[]][] = [
  ['zod', ['zod']],
  ['zod + @opentelemetry/api', ['zod', '@opentelemetry/api']],
  ['koagent (with zod + @opentelemetry/api)', ['zod', '@opentelemetry/api', root]],
];

/** Milliseconds a fresh process takes to import `specifiers`, one after the other, measured inside it. */
function importTime(specifiers: string[]): number {
  const script = `const t = performance.now(); for (const s of ${JSON.stringify(specifiers)}) await import(s); process.stdout.write(String(performance.now() - t));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('.', import.meta.url)), encoding: 'utf8' }));
}

const times = targets.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round++) targets.forEach(([, specifiers], i) => times[i]!.push(importTime(specifiers)));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const medians = times.map(median);
console.log(`\nimport time: median of ${ROUNDS} interleaved rounds, each in a fresh process`);
targets.forEach(([label], i) => console.log(`${label.padEnd(44)} ${medians[i]!.toFixed(1).padStart(7)} ms`));
console.log(`${'koagent beyond zod + @opentelemetry/api'.padEnd(44)} ${(medians[2]! - medians[1]!).toFixed(1).padStart(7)} ms`);
