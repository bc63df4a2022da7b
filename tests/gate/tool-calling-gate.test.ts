// The gate's per-episode measures when a turn makes several calls: every call
// is an emitted call judged by its own answer, so executed never exceeds
// emitted and one bad call of a turn does not hide a good one.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measureEpisode } from '../../src/gate/tool-calling-gate.js';
import type { EpisodeRecord, RecordMessage } from '../../src/records/episode-record.js';
import { conversationDataset, mostCallsInATurn, PARALLEL_LANE, readRecords } from '../conversation-lanes.js';

const call = (id: string, name = 'get_issue') => ({ id, name, arguments: '{"number":1}' });
const answer = (id: string | null, kind?: 'invalid_arguments' | 'tool_error' | 'malformed_tool_call', content = '{}'): RecordMessage => ({
  role: 'tool',
  tool_call_id: id,
  name: id === null ? null : 'get_issue',
  content,
  tool_result: kind ? { ok: false, kind, error: content } : { ok: true },
});

function record(messages: RecordMessage[], executed: number): EpisodeRecord {
  return {
    record_id: 'r',
    task: { id: 't' },
    messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'Compare #1 and #2.' }, ...messages],
    result: { outcome: 'final_answer', tool_calls: executed, rejected_calls: 0, task_completed: true },
  } as unknown as EpisodeRecord;
}

describe('gate measures with several calls a turn', () => {
  it('counts each call of a turn, judged by the answer with its id', () => {
    const measured = measureEpisode(
      record(
        [
          { role: 'assistant', content: '', tool_calls: [call('call_1'), call('call_2'), call('call_3')] },
          answer('call_1', 'invalid_arguments', 'number: expected integer'),
          answer('call_2'),
          answer('call_3', 'tool_error', 'issue #9 not found'),
          { role: 'assistant', content: '<tool_call>{', malformed_tool_call: { reason: 'not JSON' } },
          answer(null, 'malformed_tool_call'),
          { role: 'assistant', content: 'Done.' },
        ],
        2,
      ),
      1,
      0,
    );
    assert.deepEqual([measured.emitted, measured.executed, measured.contract], [4, 2, 1], 'three calls and a malformed turn; only call_2 kept the contract');
  });

  it('never gives more executed calls than emitted ones on a lane that batches reads', async () => {
    const records = readRecords(await conversationDataset(PARALLEL_LANE));
    assert.ok(records.some((each) => mostCallsInATurn(each) > 1));
    for (const each of records) {
      const measured = measureEpisode(each, 1, 0);
      const calls = each.messages.reduce((sum, message) => sum + (message.role === 'assistant' ? (message.tool_calls?.length ?? 0) : 0), 0);
      assert.equal(measured.emitted, calls, each.record_id);
      assert.ok(measured.executed <= measured.emitted && measured.contract <= measured.emitted, each.record_id);
      assert.equal(measured.contract, calls, `${each.record_id}: the scripted policy keeps the contract on every call`);
    }
  });
});
