#!/usr/bin/env node
// The `koagent` program (the package's bin): operate the runs of a run store (`koagent runs …`),
// evaluate an agent (`koagent eval`) and open the studio on a store (`koagent studio`). Exit codes: docs/cli.md.
import { main } from './command.js';

process.exitCode = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});
