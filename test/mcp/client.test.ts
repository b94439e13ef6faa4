// MCP tools as koagent tools, against the real reference servers: how they are named and
// described, how their arguments are checked, what their results become, and that every layer
// of the onion — permission rules, approval, both hook dialects — applies to them.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type AgentEvent } from '../../src/index.js';
import type { Hook } from '../../src/hooks.js';
import type { ToolSpec } from '../../src/types.js';
import { mcpTools, type McpToolset } from '../../src/mcp/index.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';
import { answerTo } from '../fixtures/counting-tools.js';
import { childProcesses, serverEntry } from '../fixtures/mcp-servers.js';

let dir: string;
let everything: McpToolset;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'koagent-mcp-'));
  // One server for the read-only checks, kept open across the runs of this file.
  everything = mcpTools({ name: 'everything', command: process.execPath, args: [serverEntry('everything'), 'stdio'], prefix: 'ev_', lifetime: 'agent' });
  await everything.connect();
});

afterAll(async () => {
  await everything.close();
  rmSync(dir, { recursive: true, force: true });
  expect(childProcesses()).toEqual([]);
});

const filesystem = (extra: Partial<Parameters<typeof mcpTools>[0]> = {}) => mcpTools({ name: 'fs', command: process.execPath, args: [serverEntry('filesystem'), dir], prefix: 'fs_', ...extra });

/** Run an agent on `everything` whose model makes `calls`, then answers. */
async function runEverything(script: MockReply[], extra: Parameters<typeof createAgent>[0] = {}) {
  const model = mockModel(script);
  const events: AgentEvent[] = [];
  const agent = createAgent({ model, tools: [everything], onEvent: (e) => events.push(e), ...extra });
  const result = await agent.run('go');
  return { result, model, events };
}

describe('mcpTools: the server tools the model is told of', () => {
  it("are named with the prefix, described and given the server's JSON Schema", () => {
    const echo = everything.tools().find((tool) => tool.name === 'ev_echo');
    expect(echo?.spec).toEqual({
      name: 'ev_echo',
      description: 'Echoes back the input string',
      parameters: { type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] },
    });
    // A name with a character model APIs refuse becomes one they accept.
    expect(everything.tools().map((t) => t.name)).toContain('ev_get-sum');
  });

  it("carry the server's annotations, with the protocol's defaults for what it leaves out", () => {
    const byName = new Map(everything.tools().map((tool) => [tool.name, tool.annotations]));
    expect(byName.get('ev_echo')).toEqual({ title: 'Echo Tool', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(byName.get('ev_toggle-simulated-logging')).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  });

  it('reach the model in each request, beside the agent\'s own tools', async () => {
    const { model } = await runEverything(['Hi.']);
    const names = (model.calls[0].request.tools as ToolSpec[]).map((spec) => spec.name);
    expect(names).toEqual(everything.tools().map((tool) => tool.name));
  });
});

describe('mcpTools: arguments', () => {
  it('that do not fit the JSON Schema settle as a validation error naming the field, and the server is not called', async () => {
    const target = join(dir, 'invalid.txt');
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'fs_write_file', args: { path: target, content: 42 } }] }, 'Sorry.']), tools: [filesystem()] });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toBe('Error (validation): Invalid arguments for fs_write_file: ✖ must be string\n  → at content');
    expect(existsSync(target)).toBe(false);
  });

  it('that fit reach the server', async () => {
    const { result } = await runEverything([{ toolCalls: [{ id: 'c', name: 'ev_get-sum', args: { a: 2, b: 3 } }] }, 'Five.']);
    expect(answerTo(result.messages, 'c').content).toBe('The sum of 2 and 3 is 5.');
  });
});

describe('mcpTools: results', () => {
  it('text content is the result, as text', async () => {
    const seen: unknown[] = [];
    const { result } = await runEverything([{ toolCalls: [{ id: 'c', name: 'ev_echo', args: { message: 'hello' } }] }, 'Done.'], { hooks: [{ name: 'watch', postToolCall: (_ctx, outcome) => void seen.push(outcome.result) }] });
    expect(seen).toEqual(['Echo: hello']);
    expect(answerTo(result.messages, 'c').content).toBe('Echo: hello');
  });

  it('an image becomes an image part the model reads', async () => {
    const { result } = await runEverything([{ toolCalls: [{ id: 'c', name: 'ev_get-tiny-image', args: {} }] }, 'A logo.']);
    const content = answerTo(result.messages, 'c').content;
    expect(Array.isArray(content)).toBe(true);
    expect(content).toContainEqual({ type: 'image', image: expect.stringMatching(/^iVBORw0KGgo/), mediaType: 'image/png' });
    expect(content).toContainEqual({ type: 'text', text: expect.any(String) });
  });

  it('an embedded text resource becomes text', async () => {
    const { result } = await runEverything([{ toolCalls: [{ id: 'c', name: 'ev_get-resource-reference', args: { resourceType: 'Text', resourceId: 1 } }] }, 'Done.']);
    expect(answerTo(result.messages, 'c').content).toMatch(/Resource 1/);
  });

  it('structuredContent is the result where the server gives one', async () => {
    const seen: unknown[] = [];
    const { result } = await runEverything([{ toolCalls: [{ id: 'c', name: 'ev_get-structured-content', args: { location: 'Chicago' } }] }, 'Done.'], { hooks: [{ name: 'watch', postToolCall: (_ctx, outcome) => void seen.push(outcome.result) }] });
    expect(seen).toEqual([{ temperature: expect.any(Number), conditions: expect.any(String), humidity: expect.any(Number) }]);
    expect(JSON.parse(answerTo(result.messages, 'c').content as string)).toEqual(seen[0]);
  });

  it('isError: true is a tool_error the model reads', async () => {
    const fs = filesystem();
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'fs_read_text_file', args: { path: '/etc/hostname' } }] }, 'Not allowed.']), tools: [fs] });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toMatch(/^Error \(tool_error\): .*Access denied - path outside allowed directories/);
  });

  it('progress notifications become mcp.progress events', async () => {
    const { result, events } = await runEverything([{ toolCalls: [{ id: 'c', name: 'ev_trigger-long-running-operation', args: { duration: 0.3, steps: 3 } }] }, 'Done.']);
    expect(answerTo(result.messages, 'c').content).toMatch(/Long running operation completed/);
    // The SDK drops a notification that arrives together with the response, so the last may be missing.
    const progress = events.filter((e) => e.type === 'mcp.progress');
    expect(progress[0]).toMatchObject({ server: 'everything', toolName: 'ev_trigger-long-running-operation', toolCallId: 'c', progress: 1, total: 3 });
    expect(progress.map((e) => (e as unknown as { progress: number }).progress)).toEqual([1, 2, 3].slice(0, progress.length));
    expect(progress.length).toBeGreaterThanOrEqual(2);
  });
});

describe('mcpTools: permission rules, approval and hooks apply as to any tool', () => {
  it('a write denied by a rule on destructive tools never reaches the server', async () => {
    const target = join(dir, 'denied.txt');
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ id: 'c', name: 'fs_write_file', args: { path: target, content: 'x' } }] }, 'I may not.']),
      tools: [filesystem()],
      permissions: [{ annotations: { destructiveHint: true }, decision: 'deny', reason: 'No destructive MCP tools' }],
    });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toBe('Error (denied): No destructive MCP tools');
    expect(existsSync(target)).toBe(false);
  });

  it('an ask rule pauses the write; it runs once a human approves', async () => {
    const target = join(dir, 'approved.txt');
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ id: 'c', name: 'fs_write_file', args: { path: target, content: 'approved' } }] }, 'Written.']),
      tools: [filesystem()],
      permissions: [{ tool: 'fs_write_file', decision: 'ask', reason: 'Writes need a human' }],
    });
    const paused = await agent.run('go');
    expect(paused.pendingApprovals).toEqual([{ toolCallId: 'c', toolName: 'fs_write_file', args: { path: target, content: 'approved' }, reason: 'Writes need a human' }]);
    expect(existsSync(target)).toBe(false);
    const done = await agent.resume(JSON.parse(JSON.stringify(paused.state)), { c: true });
    expect(done.text).toBe('Written.');
    expect(readFileSync(target, 'utf8')).toBe('approved');
  });

  it("an AgentHook preToolCall { input } rewrite is what the server gets", async () => {
    const asked = join(dir, 'asked.txt');
    const rewritten = join(dir, 'rewritten.txt');
    const agent = createAgent({
      model: mockModel([{ toolCalls: [{ id: 'c', name: 'fs_write_file', args: { path: asked, content: 'x' } }] }, 'Done.']),
      tools: [filesystem()],
      hooks: [{ name: 'redirect', preToolCall: (ctx) => ({ input: { ...ctx.args, path: rewritten } }) }],
    });
    await agent.run('go');
    expect([existsSync(asked), existsSync(rewritten)]).toEqual([false, true]);
  });

  it('a criogen beforeTool rename makes the call an MCP tool call', async () => {
    const target = join(dir, 'renamed.txt');
    const alias: Hook = { name: 'alias', beforeTool: (call) => (call.name === 'save' ? { ...call, name: 'fs_write_file' } : undefined) };
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'save', args: { path: target, content: 'renamed' } }] }, 'Saved.']), tools: [filesystem()], hooks: [alias] });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'c').content).toMatch(/Successfully wrote/);
    expect(readFileSync(target, 'utf8')).toBe('renamed');
  });
});

describe('mcpTools: sub-agents', () => {
  it("a lead's MCP toolset stays the lead's: a sub-agent's model is not told of its tools", async () => {
    const childModel = mockModel(['Nothing to add.']);
    const child = createAgent({ name: 'helper', model: childModel });
    const { result, model } = await runEverything([{ toolCalls: [{ id: 'h', name: 'helper', args: { task: 'Any thoughts?' } }] }, 'Done.'], { tools: [everything, child.asTool({ description: 'Helps' })] });
    expect(answerTo(result.messages, 'h').content).toBe('Nothing to add.');
    expect((model.calls[0].request.tools as ToolSpec[]).map((s) => s.name)).toContain('ev_echo');
    expect(childModel.calls[0].request.tools).toEqual([]);
  });
});

describe('mcpTools: options', () => {
  it.each([
    ['an unknown option', { name: 'x', command: 'node', timeoutMs: 5 }, /mcpTools: timeoutMs is not an option of mcpTools; did you mean `timeout`\?/],
    ['neither command nor url', { name: 'x' }, /give either command \(a server spawned over stdio\) or url \(a Streamable HTTP server\), not neither/],
    ['both command and url', { name: 'x', command: 'node', url: 'http://127.0.0.1:1/mcp' }, /not both/],
    ['headers for a spawned server', { name: 'x', command: 'node', headers: { a: 'b' } }, /headers belong to a server at a url/],
    ['a prefix models refuse', { name: 'x', command: 'node', prefix: 'fs.' }, /prefix may hold only letters, digits/],
  ])('%s is refused', (_what, options, message) => {
    expect(() => mcpTools(options as never)).toThrow(message);
  });
});
