// How a stored run becomes a run state again, whichever store kept it.
import { describe, expect, it } from 'vitest';
import { assembleState, partsOf, rowOf } from '../../src/stores/records.js';
import { storedState } from '../support/durable.js';

describe('assembleState', () => {
  const stored = () => {
    const state = storedState('run_1', 's_1', 'teller', [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'b', name: 'add', args: {} }, { id: 'a', name: 'add', args: {} }] },
    ]);
    state.ledger = [{ id: 'b', entry: 'done' }, { id: 'a', entry: 'running' }];
    state.settled = [{ role: 'tool', toolCallId: 'b', name: 'add', content: '3' }];
    return state;
  };

  it('puts back the state it was given, in the format of this version', () => {
    const state = stored();
    const parts = partsOf(state);
    expect(assembleState('run_1', rowOf(state), parts.messages, parts.calls, parts.hooks)).toEqual(state);
  });

  it('gives a run stored by an earlier version (format 2 in its identity) the format of this one: the rows are the same in both', () => {
    const state = stored();
    const parts = partsOf(state);
    const row = { ...rowOf(state), identity: JSON.stringify({ ...JSON.parse(rowOf(state).identity), version: 2 }) };
    expect(assembleState('run_1', row, parts.messages, parts.calls, parts.hooks)).toMatchObject({ ...state, version: 3 });
  });

  it('lists the calls as the transcript made them, a call it no longer shows (compacted away) first', () => {
    const state = stored();
    const parts = partsOf(state);
    const rows = [...parts.calls, ['old', 'done', null] as [string, 'done', null]].sort(([a], [b]) => a.localeCompare(b));
    const assembled = assembleState('run_1', rowOf(state), parts.messages, rows, parts.hooks);
    expect(assembled.ledger.map((call) => call.id)).toEqual(['old', 'b', 'a']);
  });
});
