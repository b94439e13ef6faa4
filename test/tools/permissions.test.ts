import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, deny, type AgentOptions } from '../../src/index.js';
import type { PermissionRecord } from '../../src/types.js';
import type { PermissionsOption } from '../../src/tools/permissions.js';
import { mockModel, type MockToolCall } from '../../src/testing/index.js';
import { answerTo, countingTool, eventLog } from '../fixtures/counting-tools.js';

/** An agent whose model makes `calls` in one turn, then answers; tools named by `names`. */
function setup(permissions: PermissionsOption | undefined, calls: MockToolCall[], names: string[], extra: Partial<AgentOptions> = {}) {
  const tools = Object.fromEntries(names.map((n) => [n, countingTool(n)]));
  const records: PermissionRecord[] = [];
  const log = eventLog();
  const model = mockModel([{ toolCalls: calls }, 'Done.']);
  const agent = createAgent({
    model,
    tools: Object.values(tools).map((t) => t.tool),
    permissions,
    onPermissionDecision: (r) => records.push(r),
    onEvent: log.listener,
    ...extra,
  });
  return { agent, model, tools, records, log };
}

describe('permissions: rule forms', () => {
  it('an exact tool name matches that tool only', async () => {
    const { agent, tools } = setup([{ tool: 'fs_delete', decision: 'deny' }], [{ id: 'a', name: 'fs_delete', args: {} }, { id: 'b', name: 'fs_deleted', args: {} }], ['fs_delete', 'fs_deleted']);
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'a').metadata?.error).toMatchObject({ kind: 'denied' });
    expect(tools.fs_delete.runs).toHaveLength(0);
    expect(tools.fs_deleted.runs).toHaveLength(1);
  });

  it('a glob matches by pattern: * any run of characters, ? one character', async () => {
    const calls = ['fs_read', 'fs_write', 'net_fetch', 'db1', 'db12'].map((name) => ({ id: name, name, args: {} }));
    const { agent, tools } = setup([{ tool: 'fs_*', decision: 'deny' }, { tool: 'db?', decision: 'deny' }], calls, calls.map((c) => c.name));
    await agent.run('go');
    expect(Object.fromEntries(Object.entries(tools).map(([n, t]) => [n, t.runs.length]))).toEqual({ fs_read: 0, fs_write: 0, net_fetch: 1, db1: 0, db12: 1 });
  });

  it('a glob treats regular-expression characters literally', async () => {
    const { agent, tools } = setup([{ tool: 'a.c', decision: 'deny' }], [{ id: 'x', name: 'abc', args: {} }], ['abc']);
    await agent.run('go');
    expect(tools.abc.runs).toHaveLength(1);
  });

  it('a predicate decides from the tool name and the arguments', async () => {
    const seen: unknown[] = [];
    const rule = { when: (name: string, args: Record<string, unknown>) => (seen.push([name, args]), Number(args.amount) > 100), decision: 'deny' as const };
    const { agent, tools } = setup([rule], [{ id: 'small', name: 'pay', args: { amount: 20 } }, { id: 'big', name: 'pay', args: { amount: 500 } }], ['pay']);
    await agent.run('go');
    expect(tools.pay.runs).toEqual([{ amount: 20 }]);
    expect(seen).toEqual([['pay', { amount: 20 }], ['pay', { amount: 500 }]]);
  });

  it('an async predicate is awaited', async () => {
    const rule = { when: async (_n: string, args: Record<string, unknown>) => args.amount === 500, decision: 'deny' as const };
    const { agent, tools } = setup([rule], [{ id: 'a', name: 'pay', args: { amount: 500 } }, { id: 'b', name: 'pay', args: { amount: 5 } }], ['pay']);
    await agent.run('go');
    expect(tools.pay.runs).toEqual([{ amount: 5 }]);
  });

  it('a rule with both a tool pattern and a predicate matches only when both do', async () => {
    const calls = [{ id: 'p1', name: 'pay', args: { amount: 50 } }, { id: 'p2', name: 'pay', args: { amount: 500 } }, { id: 'r', name: 'refund', args: { amount: 500 } }];
    const { agent, tools } = setup([{ tool: 'pay', when: (_n, a) => Number(a.amount) > 100, decision: 'deny' }], calls, ['pay', 'refund']);
    await agent.run('go');
    expect(tools.pay.runs).toEqual([{ amount: 50 }]);
    expect(tools.refund.runs).toEqual([{ amount: 500 }]);
  });

  it('the first matching rule decides; later rules are not consulted', async () => {
    let laterAsked = 0;
    const rules: PermissionsOption = [
      { tool: 'fs_read', decision: 'allow' },
      { tool: 'fs_*', decision: 'deny', reason: 'no file writes' },
      { when: () => (laterAsked++, true), decision: 'deny' },
    ];
    const { agent, tools, records } = setup(rules, [{ id: 'r', name: 'fs_read', args: {} }, { id: 'w', name: 'fs_write', args: {} }], ['fs_read', 'fs_write']);
    await agent.run('go');
    expect(tools.fs_read.runs).toHaveLength(1);
    expect(tools.fs_write.runs).toHaveLength(0);
    expect(laterAsked).toBe(0);
    expect(records.map((r) => [r.toolCallId, r.decision, r.rule])).toEqual([['r', 'allow', 'fs_read'], ['w', 'deny', 'fs_*']]);
  });

  it('a predicate that throws denies the call (fail closed), naming the rule, and the run goes on', async () => {
    const rule = { name: 'limits', when: () => { throw new Error('limits service down'); }, decision: 'allow' as const };
    const { agent, tools, records } = setup([rule], [{ id: 'a', name: 'pay', args: { amount: 1 } }], ['pay']);
    const result = await agent.run('go');
    expect(result.status).toBe('completed');
    expect(tools.pay.runs).toHaveLength(0);
    expect(answerTo(result.messages, 'a').content).toBe('Error (denied): permission rule "limits" threw, so the call was denied: limits service down');
    expect(records).toEqual([expect.objectContaining({ decision: 'deny', source: 'rule', rule: 'limits' })]);
  });
});

describe('permissions: configuration errors', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a rule without tool, annotations or when', [{ decision: 'deny' }], /permissions\[0\] needs a tool name or glob \(tool\), annotations to match, or a predicate \(when\)/],
    ['an unknown decision', [{ tool: 'x', decision: 'maybe' }], /permissions\[0\]\.decision must be 'allow', 'deny' or 'ask' \(got the string "maybe"\)/],
    ['a tool that is not a string', [{ tool: 3, decision: 'deny' }], /permissions\[0\]\.tool must be a string/],
    ['a when that is not a function', [{ when: true, decision: 'deny' }], /permissions\[0\]\.when must be a function/],
    ['a bad default', { rules: [], default: 'never' }, /permissions\.default must be 'allow', 'deny' or 'ask' \(got the string "never"\)/],
    ['neither an array nor { rules }', { default: 'deny' }, /permissions\.rules must be an array of rules/],
    ['not an object at all', 'deny', /permissions must be an array of rules or \{ rules: \[\.\.\.\], default\? \}/],
  ];
  it.each(cases)('%s is rejected when the agent is created', (_what, permissions, message) => {
    expect(() => createAgent({ model: mockModel([]), permissions: permissions as PermissionsOption })).toThrow(message);
  });
});

describe('permissions: the default decision', () => {
  it('is allow when no rule matches, recorded with source default', async () => {
    const { agent, tools, records } = setup([{ tool: 'other', decision: 'deny' }], [{ id: 'a', name: 'read', args: {} }], ['read', 'other']);
    await agent.run('go');
    expect(tools.read.runs).toHaveLength(1);
    expect(records).toEqual([{ toolName: 'read', toolCallId: 'a', args: {}, decision: 'allow', source: 'default' }]);
  });

  it("default: 'deny' denies every call no rule allows", async () => {
    const { agent, tools, records } = setup({ rules: [{ tool: 'read', decision: 'allow' }], default: 'deny' }, [{ id: 'r', name: 'read', args: {} }, { id: 'w', name: 'write', args: {} }], ['read', 'write']);
    const result = await agent.run('go');
    expect(tools.read.runs).toHaveLength(1);
    expect(tools.write.runs).toHaveLength(0);
    expect(answerTo(result.messages, 'w').content).toBe('Error (denied): write is not allowed by default');
    expect(records[1]).toEqual({ toolName: 'write', toolCallId: 'w', args: {}, decision: 'deny', source: 'default' });
  });

  it("default: 'ask' pauses every call no rule allows", async () => {
    const { agent, tools } = setup({ rules: [{ tool: 'read', decision: 'allow' }], default: 'ask' }, [{ id: 'r', name: 'read', args: {} }, { id: 'w', name: 'write', args: { path: 'a' } }], ['read', 'write']);
    const result = await agent.run('go');
    expect(result.status).toBe('suspended');
    expect(result.pendingApprovals).toEqual([{ toolCallId: 'w', toolName: 'write', args: { path: 'a' } }]);
    expect(tools.read.runs).toHaveLength(1);
    expect(tools.write.runs).toHaveLength(0);
  });
});

describe('permissions: deny', () => {
  it('settles the call with a denied tool error the model sees, and a tool.error event', async () => {
    const { agent, model, tools, log } = setup([{ name: 'no-shell', tool: 'shell', decision: 'deny', reason: 'The shell is disabled here' }], [{ id: 's', name: 'shell', args: { note: 'ls' } }], ['shell']);
    const result = await agent.run('go');
    expect(tools.shell.runs).toHaveLength(0);
    const answer = answerTo(result.messages, 's');
    expect(answer.content).toBe('Error (denied): The shell is disabled here');
    expect(answer.metadata?.error).toEqual({ kind: 'denied', message: 'The shell is disabled here', by: 'rule:no-shell' });
    expect(model.calls[1].messages.at(-1)).toEqual(answer);
    expect(log.of('tool.error')).toEqual([expect.objectContaining({ toolCallId: 's', toolName: 'shell', error: { kind: 'denied', message: 'The shell is disabled here', by: 'rule:no-shell' } })]);
    expect(result.text).toBe('Done.');
  });

  it('without a reason, the message names the rule', async () => {
    const { agent } = setup([{ tool: 'shell', decision: 'deny' }], [{ id: 's', name: 'shell', args: {} }], ['shell']);
    const result = await agent.run('go');
    expect(answerTo(result.messages, 's').content).toBe('Error (denied): permission rule "shell" denies shell');
  });
});

describe('permissions: ask', () => {
  it('pauses the call for a human, with the rule\'s reason, and runs it once approved', async () => {
    const { agent, tools, records } = setup([{ tool: 'deploy', decision: 'ask', reason: 'Deploys need a human' }], [{ id: 'd', name: 'deploy', args: { note: 'prod' } }], ['deploy']);
    const paused = await agent.run('go');
    expect(paused.status).toBe('suspended');
    expect(paused.pendingApprovals).toEqual([{ toolCallId: 'd', toolName: 'deploy', args: { note: 'prod' }, reason: 'Deploys need a human' }]);
    expect(tools.deploy.runs).toHaveLength(0);
    const done = await agent.resume(paused.state, { d: true });
    expect(done.status).toBe('completed');
    expect(tools.deploy.runs).toEqual([{ note: 'prod' }]);
    expect(records.map((r) => [r.decision, r.source])).toEqual([['ask', 'rule'], ['allow', 'approval']]);
  });
});

describe('permissions: rules see the arguments the layers produced', () => {
  it('a layer that rewrites args runs before the rules', async () => {
    const seen: unknown[] = [];
    const rule = { when: (_n: string, args: Record<string, unknown>) => (seen.push(args), Number(args.amount) > 100), decision: 'deny' as const };
    const { agent, tools } = setup([rule], [{ id: 'a', name: 'pay', args: { amount: 50 } }], ['pay'], {
      middleware: [{ name: 'triple', tool: (ctx, next) => { ctx.args = { amount: Number(ctx.args.amount) * 3 }; return next(); } }],
    });
    const result = await agent.run('go');
    expect(seen).toEqual([{ amount: 150 }]);
    expect(tools.pay.runs).toHaveLength(0);
    expect(answerTo(result.messages, 'a').metadata?.error).toMatchObject({ kind: 'denied' });
  });
});

describe('onPermissionDecision: one record per decision', () => {
  it('records rule decisions with the rule name (its own, else the tool pattern, else rule#<index>) and reason', async () => {
    const rules: PermissionsOption = [
      { name: 'reads-ok', tool: 'read', decision: 'allow', reason: 'harmless' },
      { tool: 'list', decision: 'allow' },
      { when: (n) => n === 'stat', decision: 'allow' },
    ];
    const calls = [{ id: '1', name: 'read', args: { path: 'a' } }, { id: '2', name: 'list', args: {} }, { id: '3', name: 'stat', args: {} }];
    const { agent, records, log } = setup(rules, calls, ['read', 'list', 'stat'], { toolConcurrency: 1 });
    await agent.run('go');
    expect(records).toEqual([
      { toolName: 'read', toolCallId: '1', args: { path: 'a' }, decision: 'allow', source: 'rule', rule: 'reads-ok', reason: 'harmless' },
      { toolName: 'list', toolCallId: '2', args: {}, decision: 'allow', source: 'rule', rule: 'list' },
      { toolName: 'stat', toolCallId: '3', args: {}, decision: 'allow', source: 'rule', rule: 'rule#2' },
    ]);
    // The same records reach event listeners as permission.decision events.
    expect(log.of('permission.decision').map(({ type, runId, at, ...record }) => record)).toEqual(records);
  });

  it('records a native middleware that denies without next() as source hook, with the layer name and reason', async () => {
    const { agent, records, tools } = setup(undefined, [{ id: 'x', name: 'shell', args: { note: 'rm' } }], ['shell'], {
      middleware: [{ name: 'no-shell', tool: (ctx, next) => (ctx.toolName === 'shell' ? deny('Use the workspace tools instead') : next()) }],
    });
    const result = await agent.run('go');
    expect(tools.shell.runs).toHaveLength(0);
    expect(records).toEqual([{ toolName: 'shell', toolCallId: 'x', args: { note: 'rm' }, decision: 'deny', source: 'hook', hook: 'no-shell', reason: 'Use the workspace tools instead' }]);
    expect(answerTo(result.messages, 'x').metadata?.error).toEqual({ kind: 'denied', message: 'Use the workspace tools instead', by: 'no-shell' });
  });

  it('records a hook denial once, even through outer layers, and no rule decision after it', async () => {
    const { agent, records } = setup([{ tool: '*', decision: 'allow' }], [{ id: 'x', name: 'shell', args: {} }], ['shell'], {
      middleware: [
        { name: 'outer', tool: (_ctx, next) => next() },
        { name: 'guard', tool: () => deny('nope') },
      ],
    });
    await agent.run('go');
    expect(records).toEqual([expect.objectContaining({ decision: 'deny', source: 'hook', hook: 'guard' })]);
  });

  it("records a human's decisions with source approval and the human's reason", async () => {
    const { agent, records } = setup([{ tool: 'pay', decision: 'ask' }], [{ id: 'a', name: 'pay', args: { amount: 1 } }, { id: 'b', name: 'pay', args: { amount: 2 } }], ['pay'], { toolConcurrency: 1 });
    const paused = await agent.run('go');
    records.length = 0;
    await agent.resume(paused.state, { a: { approved: true, reason: 'fine' }, b: { approved: false, reason: 'too much' } });
    expect(records).toEqual([
      { toolName: 'pay', toolCallId: 'a', args: { amount: 1 }, decision: 'allow', source: 'approval', reason: 'fine' },
      { toolName: 'pay', toolCallId: 'b', args: { amount: 2 }, decision: 'deny', source: 'approval', reason: 'too much' },
    ]);
  });

  it('an approved call is not recorded again by the rules when it resumes', async () => {
    const { agent, records } = setup([{ tool: 'pay', decision: 'ask' }], [{ id: 'a', name: 'pay', args: {} }], ['pay']);
    const paused = await agent.run('go');
    await agent.resume(paused.state, { a: true });
    expect(records.map((r) => `${r.decision}/${r.source}`)).toEqual(['ask/rule', 'allow/approval']);
  });

  it('records default decisions when only onPermissionDecision is given (no rules)', async () => {
    const { agent, records } = setup(undefined, [{ id: 'a', name: 'read', args: {} }], ['read']);
    await agent.run('go');
    expect(records).toEqual([{ toolName: 'read', toolCallId: 'a', args: {}, decision: 'allow', source: 'default' }]);
  });

  it('a record is a copy: a listener that changes record.args does not change the call', async () => {
    const { agent, tools } = setup(undefined, [{ id: 'a', name: 'read', args: { path: '/safe' } }], ['read'], {
      onPermissionDecision: (r) => { (r.args as { path: string }).path = '/etc/passwd'; },
    });
    await agent.run('go');
    expect(tools.read.runs).toEqual([{ path: '/safe' }]);
  });

  it('a listener that throws is logged and the run goes on', async () => {
    const warnings: string[] = [];
    const { agent, tools } = setup([{ tool: 'read', decision: 'allow' }], [{ id: 'a', name: 'read', args: {} }], ['read'], {
      onPermissionDecision: () => { throw new Error('audit log down'); },
      logger: { warn: (m) => warnings.push(m) },
    });
    const result = await agent.run('go');
    expect(result.status).toBe('completed');
    expect(tools.read.runs).toHaveLength(1);
    expect(warnings).toEqual(['koagent: onPermissionDecision threw; the run goes on']);
  });
});

describe('permissions: rules on tool annotations', () => {
  const annotated = (name: string, annotations: Record<string, boolean> | undefined) => {
    const runs: unknown[] = [];
    const tool = defineTool({ name, description: name, ...(annotations ? { annotations } : {}), execute: () => runs.push(name) });
    return { tool, runs };
  };

  it('a rule with annotations matches the tools that have each of those values, and no tool without them', async () => {
    const rm = annotated('rm', { readOnlyHint: false, destructiveHint: true });
    const ls = annotated('ls', { readOnlyHint: true });
    const plain = annotated('plain', undefined);
    const model = mockModel([{ toolCalls: ['rm', 'ls', 'plain'].map((name) => ({ id: name, name, args: {} })) }, 'Done.']);
    const records: PermissionRecord[] = [];
    const agent = createAgent({ model, tools: [rm.tool, ls.tool, plain.tool], permissions: [{ annotations: { destructiveHint: true }, decision: 'deny', reason: 'Nothing destructive' }], onPermissionDecision: (r) => records.push(r) });
    const result = await agent.run('go');
    expect(answerTo(result.messages, 'rm').content).toBe('Error (denied): Nothing destructive');
    expect([rm.runs.length, ls.runs.length, plain.runs.length]).toEqual([0, 1, 1]);
    expect(records.find((r) => r.toolName === 'rm')).toMatchObject({ source: 'rule', rule: 'annotations:destructiveHint=true' });
  });

  it('an ask rule on annotations pauses the call for a human', async () => {
    const rm = annotated('rm', { destructiveHint: true });
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'rm', args: {} }] }, 'Removed.']), tools: [rm.tool], permissions: [{ annotations: { destructiveHint: true }, decision: 'ask', reason: 'It may destroy data' }] });
    const paused = await agent.run('go');
    expect(paused.pendingApprovals).toEqual([{ toolCallId: 'c', toolName: 'rm', args: {}, reason: 'It may destroy data' }]);
    expect(rm.runs).toHaveLength(0);
    expect((await agent.resume(paused.state, { c: true })).text).toBe('Removed.');
    expect(rm.runs).toHaveLength(1);
  });

  it('a predicate gets the resolved tool as its third argument', async () => {
    const rm = annotated('rm', { destructiveHint: true });
    const seen: unknown[] = [];
    const agent = createAgent({ model: mockModel([{ toolCalls: [{ id: 'c', name: 'rm', args: {} }] }, 'Done.']), tools: [rm.tool], permissions: [{ when: (_name, _args, tool) => (seen.push(tool.annotations), tool.annotations?.destructiveHint === true), decision: 'deny' }] });
    await agent.run('go');
    expect(seen).toEqual([{ destructiveHint: true }]);
    expect(rm.runs).toHaveLength(0);
  });

  it('an unknown annotation in a rule is refused, naming the one meant', () => {
    expect(() => createAgent({ model: mockModel([]), permissions: [{ annotations: { destructive: true } as never, decision: 'ask' }] })).toThrow(/permissions\[0\]\.annotations\.destructive is not a tool annotation a rule can match; did you mean `destructiveHint`\?/);
  });
});
