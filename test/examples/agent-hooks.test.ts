// Every code example and recipe of the AgentHook guide (seed 000_…txt) lives, in our own words,
// under examples/agent-hooks/. Each test imports one, runs it, and checks what the guide says
// it does; the last one runs a file the way a reader would, with npx tsx, in a second process.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { auditExample } from '../../examples/agent-hooks/first-hook.js';
import { outcomesExample } from '../../examples/agent-hooks/outcomes.js';
import { denyToolExample } from '../../examples/agent-hooks/deny-tool.js';
import { defaultArgumentExample } from '../../examples/agent-hooks/default-argument.js';
import { redactResultExample } from '../../examples/agent-hooks/redact-result.js';
import { injectContextExample } from '../../examples/agent-hooks/inject-context.js';
import { registryExample } from '../../examples/agent-hooks/registry.js';
import { textOf } from '../../src/core/vocabulary/content.js';

const quiet = () => undefined;

describe('examples/agent-hooks', () => {
  it('first-hook: "this one logs every tool call and what it returned" — calling, then finished', async () => {
    expect(await auditExample(quiet)).toEqual([
      'calling encyclopedia {"topic":"onions"}',
      'finished encyclopedia ok',
      'answer: Onions are on page 42.',
    ]);
  });

  it('outcomes: the guard denies the shell, gives search limit 10, and cuts string results to 2000 characters', async () => {
    const { shell, search, searchArgs } = await outcomesExample(quiet);
    expect(shell.content).toBe('Error (denied): Use the workspace tools, not the shell');
    expect(shell.metadata?.error).toMatchObject({ kind: 'denied', by: 'gatekeeper' });
    expect(searchArgs).toEqual({ query: 'todo', limit: 10 });
    expect(search.content).toHaveLength(2000);
    expect(textOf(search.content).startsWith('hit for todo hit for todo')).toBe(true);
  });

  it('deny-tool: "Deny a tool by name" — the tool does not run and the model reads a denied error', async () => {
    const { text, model, ran } = await denyToolExample(quiet);
    expect(ran).toBe(false);
    expect(model.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: 'Error (denied): This deployment has no shell' });
    expect(text).toBe('I was not allowed to run that.');
  });

  it('default-argument: "Add a default argument" — the tool gets limit 5 when the model gave none', async () => {
    expect(await defaultArgumentExample(quiet)).toEqual([{ query: 'middleware', limit: 5 }]);
  });

  it('redact-result: "Truncate or redact a result" — the second model call sees the masked, truncated text; the tool ran unchanged', async () => {
    const { raw, seen } = await redactResultExample(quiet);
    expect(raw).toContain('grace@navy.example');
    expect(seen?.role).toBe('tool');
    expect(seen?.content).toHaveLength(1000);
    expect((seen && textOf(seen.content))?.startsWith('login ok: [email] from 10.0.0.7; ')).toBe(true);
    expect(seen?.content).not.toContain('@');
  });

  it('inject-context: "Inject context before a model call" — the one request ends with the added system message and has temperature 0', async () => {
    const { model, transcriptRoles, today } = await injectContextExample(quiet);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0].messages.at(-1)).toEqual({ role: 'system', content: `The date today is ${today}.` });
    expect(model.calls[0].request.temperature).toBe(0);
    expect(transcriptRoles).toEqual(['system', 'user', 'system', 'assistant']);
  });

  it('registry: "HookRegistry" — one registered hook is listed by name, and size() is a method', () => {
    expect(registryExample(quiet)).toEqual({ names: ['scrub-secrets'], size: 1 });
  });

  it.each([
    ['first-hook.ts', 'calling encyclopedia {"topic":"onions"}\nfinished encyclopedia ok\n'],
    ['outcomes.ts', 'search → ran with {"query":"todo","limit":10}; the model got 2000 characters\n'],
    ['deny-tool.ts', 'the model was told: Error (denied): This deployment has no shell\nanswer: I was not allowed to run that.\n'],
    ['default-argument.ts', 'the tool ran with {"query":"middleware","limit":5}\n'],
    ['redact-result.ts', '(1000 characters; the tool returned 5044)\n'],
    ['inject-context.ts', 'model calls: 1\n'],
    ['registry.ts', "[ 'scrub-secrets' ]\n"],
  ])('%s runs on its own with tsx, offline, in a second process, and prints what it shows', async (file, expected) => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', `examples/agent-hooks/${file}`], { cwd: root });
    expect(stdout).toContain(expected);
  });
});
