import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, RunFailedError, type AgentOptions, type Middleware, type ToolContext } from '../../src/index.js';
import { mockModel, type MockReply } from '../../src/testing/index.js';
import { answerTo } from '../fixtures/counting-tools.js';

/** A tool that records the idempotency key of every execution, failing the first `failures` times. */
function keyedTool(options: { failures?: number; needsApproval?: boolean } = {}) {
  const keys: string[] = [];
  let failures = options.failures ?? 0;
  const tool = defineTool({
    name: 'send_email',
    description: 'Send an e-mail',
    needsApproval: options.needsApproval,
    execute(_args, ctx) {
      keys.push(ctx.idempotencyKey);
      if (failures-- > 0) throw new Error('SMTP timeout');
      return 'sent';
    },
  });
  return { tool, keys };
}

function agentWith(tool: ReturnType<typeof keyedTool>['tool'], script: MockReply[], extra: Partial<AgentOptions> = {}) {
  return createAgent({ model: mockModel(script), tools: [tool], ...extra });
}

const oneCall: MockReply[] = [{ toolCalls: [{ id: 'mail', name: 'send_email', args: {} }] }, 'Sent.'];

/** Calls next() again while the outcome is an error, up to `times` attempts. */
const retry = (times: number): Middleware => ({
  name: 'retry',
  async tool(_ctx, next) {
    let outcome = await next();
    for (let i = 1; i < times && outcome.error !== undefined; i++) outcome = await next();
    return outcome;
  },
});

describe('idempotencyKey', () => {
  it('is derived from the run id and the tool call id, and differs per call', async () => {
    const { tool, keys } = keyedTool();
    const result = await agentWith(tool, [{ toolCalls: [{ id: 'a', name: 'send_email', args: {} }, { id: 'b', name: 'send_email', args: {} }] }, 'ok']).run('go');
    expect(keys).toEqual([`${result.runId}:a`, `${result.runId}:b`]);
  });

  it("is the same across a retry layer's attempts, and a failed execution is retried", async () => {
    const { tool, keys } = keyedTool({ failures: 2 });
    const result = await agentWith(tool, oneCall, { middleware: [retry(3)] }).run('go');
    expect(keys).toEqual(Array(3).fill(`${result.runId}:mail`));
    expect(answerTo(result.messages, 'mail').content).toBe('sent');
  });

  it('a successful execution is not repeated when a layer calls next() again', async () => {
    const { tool, keys } = keyedTool();
    const twice: Middleware = { name: 'twice', async tool(_ctx, next) { const first = await next(); const second = await next(); expect(second).toBe(first); return second; } };
    await agentWith(tool, oneCall, { middleware: [twice] }).run('go');
    expect(keys).toHaveLength(1);
  });

  it('is the same across resume after approval', async () => {
    const { tool, keys } = keyedTool({ needsApproval: true });
    const firstPass: string[] = [];
    const spy: Middleware = { name: 'spy', tool: (ctx, next) => (firstPass.push(ctx.idempotencyKey), next()) };
    const agent = agentWith(tool, oneCall, { middleware: [spy] });
    const paused = await agent.run('go');
    await agent.resume(JSON.parse(JSON.stringify(paused.state)), { mail: true });
    expect(firstPass).toEqual([`${paused.runId}:mail`, `${paused.runId}:mail`]);
    expect(keys).toEqual([`${paused.runId}:mail`]);
  });

  it('is the same across a retried failed segment (agent.resume(error.state))', async () => {
    const { tool, keys } = keyedTool();
    const seen: string[] = [];
    let broken = true;
    const flaky: Middleware = { name: 'flaky-audit', tool(ctx, next) { seen.push(ctx.idempotencyKey); if (broken) throw new Error('audit store down'); return next(); } };
    const agent = agentWith(tool, oneCall, { middleware: [flaky] });
    const failure = await agent.run('go').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RunFailedError);
    const { state } = failure as RunFailedError;
    expect(state.ledger).toEqual([{ id: 'mail', entry: 'pending' }]);
    broken = false;
    const done = await agent.resume(state);
    expect(done.text).toBe('Sent.');
    expect(seen).toEqual([`${state.runId}:mail`, `${state.runId}:mail`]);
    expect(keys).toEqual([`${state.runId}:mail`]);
  });
});

describe('the effect ledger', () => {
  it('records each call as done once its result is recorded', async () => {
    const { tool } = keyedTool();
    const result = await agentWith(tool, oneCall).run('go');
    expect(result.state.ledger).toEqual([{ id: 'mail', entry: 'done' }]);
  });

  it('a retried segment does not run again a call that completed before the failure', async () => {
    const { tool, keys } = keyedTool();
    const agent = agentWith(tool, [oneCall[0], { error: 'model overloaded' }, 'Sent, finally.']);
    const failure = (await agent.run('go').catch((e: unknown) => e)) as RunFailedError;
    expect(failure.code).toBe('model_error');
    expect(failure.state.ledger).toEqual([{ id: 'mail', entry: 'done' }]);
    const done = await agent.resume(failure.state);
    expect(done.text).toBe('Sent, finally.');
    expect(keys).toHaveLength(1);
  });

  it('a call that had started when the segment failed is not run again; the model is told why', async () => {
    const { tool, keys } = keyedTool();
    let broken = true;
    const after: Middleware = { name: 'post-audit', async tool(_ctx, next) { const outcome = await next(); if (broken) throw new Error('audit store down'); return outcome; } };
    const agent = agentWith(tool, oneCall, { middleware: [after] });
    const failure = (await agent.run('go').catch((e: unknown) => e)) as RunFailedError;
    expect(failure).toMatchObject({ code: 'hook_failed', layer: 'post-audit' });
    expect(failure.state.ledger).toEqual([{ id: 'mail', entry: 'running' }]);
    broken = false;
    const done = await agent.resume(failure.state);
    expect(keys).toHaveLength(1);
    expect(answerTo(done.messages, 'mail').content).toBe(`Error (execution): This call had started when the run was interrupted and may have taken effect; it is not run again (idempotency key ${failure.runId}:mail)`);
  });

  it("a tool exception that fails the run (onToolException: 'fail') is not run again on retry", async () => {
    const { tool, keys } = keyedTool({ failures: 1 });
    const agent = agentWith(tool, oneCall, { onToolException: 'fail' });
    const failure = (await agent.run('go').catch((e: unknown) => e)) as RunFailedError;
    expect(failure.code).toBe('tool_exception');
    await agent.resume(failure.state);
    expect(keys).toHaveLength(1);
  });

  it('a retry layer may retry a tool whose exception fails the run, with the same key', async () => {
    const { tool, keys } = keyedTool({ failures: 1 });
    const retryThrown: Middleware = { name: 'retry-thrown', async tool(_ctx, next) { try { return await next(); } catch { return next(); } } };
    const result = await agentWith(tool, oneCall, { onToolException: 'fail', middleware: [retryThrown] }).run('go');
    expect(keys).toEqual([`${result.runId}:mail`, `${result.runId}:mail`]);
    expect(answerTo(result.messages, 'mail').content).toBe('sent');
  });

  it('is plain JSON in the state, keyed by tool call id', async () => {
    const { tool } = keyedTool({ needsApproval: true });
    const paused = await agentWith(tool, [{ toolCalls: [{ id: 'mail', name: 'send_email', args: {} }] }]).run('go');
    expect(JSON.parse(JSON.stringify(paused.state)).ledger).toEqual([{ id: 'mail', entry: 'pending' }]);
  });
});

describe('a context sees the key before the tool runs', () => {
  it('needsApproval and the tool get the same key', async () => {
    const asked: string[] = [];
    const keys: string[] = [];
    const tool = defineTool({ name: 't', description: 'd', needsApproval: (_a, ctx: ToolContext) => (asked.push(ctx.idempotencyKey), false), execute: (_a, ctx) => (keys.push(ctx.idempotencyKey), 1) });
    await createAgent({ model: mockModel([{ toolCalls: [{ id: 'x', name: 't', args: {} }] }, 'ok']), tools: [tool] }).run('go');
    expect(asked).toEqual(keys);
  });
});

describe('a call that was running when its segment failed (no store)', () => {
  /** The run fails in a layer after the tool ran; the retry then finds the call `running`. */
  async function interrupted(extra: { idempotent?: boolean; onInterrupted?: 'report' | 'ask' | 'rerun' }) {
    const keys: string[] = [];
    const tool = defineTool({ name: 'send_email', description: 'Send an e-mail', ...extra, execute: (_a, ctx) => (keys.push(ctx.idempotencyKey), 'sent') });
    let broken = true;
    const after: Middleware = { name: 'post-audit', async tool(_ctx, next) { const outcome = await next(); if (broken) throw new Error('audit store down'); return outcome; } };
    const agent = createAgent({ model: mockModel([...oneCall, 'Sent again.']), tools: [tool], middleware: [after] });
    const failure = (await agent.run('go').catch((e: unknown) => e)) as RunFailedError;
    broken = false;
    return { agent, failure, keys };
  }

  it('runs again, with the same key, when its tool is idempotent', async () => {
    const { agent, failure, keys } = await interrupted({ idempotent: true });
    const done = await agent.resume(failure.state);
    expect(keys).toEqual([`${failure.runId}:mail`, `${failure.runId}:mail`]);
    expect(answerTo(done.messages, 'mail').content).toBe('sent');
  });

  it("suspends for a human when its tool says 'ask'; approved, it runs again", async () => {
    const { agent, failure, keys } = await interrupted({ onInterrupted: 'ask' });
    const paused = await agent.resume(failure.state);
    expect(paused.status).toBe('suspended');
    expect(paused.pendingApprovals).toMatchObject([{ toolCallId: 'mail', toolName: 'send_email', reason: expect.stringContaining('approve to run it again') }]);
    expect(paused.state.ledger).toEqual([{ id: 'mail', entry: 'pending' }]);
    const done = await agent.resume(paused.state, { mail: true });
    expect(keys).toHaveLength(2);
    expect(answerTo(done.messages, 'mail').content).toBe('sent');
  });
});

