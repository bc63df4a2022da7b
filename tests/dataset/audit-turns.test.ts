// The turns check of `audit` and its user-simulator provenance rule, on
// conversations built here: what the runner writes passes (several calls a
// turn, a malformed call, a limit reached mid-turn, a turn cut short by wall
// time, simulated user turns), and each way of breaking the pairing of calls
// and answers, or of hiding who wrote a user turn, is named by JSON pointer.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { provenanceProblems, turnProblems } from '../../src/dataset/audit-checks.js';
import type { EpisodeRecord, RecordMessage } from '../../src/records/episode-record.js';
import { conversationDataset, DIALOGUE_LANE, PARALLEL_LANE, readRecords } from '../conversation-lanes.js';

const system: RecordMessage = { role: 'system', content: 'You have tools.' };
const opening: RecordMessage = { role: 'user', content: 'Compare #1 and #2.' };
const calls = (...ids: string[]): RecordMessage => ({ role: 'assistant', content: '', tool_calls: ids.map((id) => ({ id, name: 'get_issue', arguments: '{"number":1}' })) });
const answer = (id: string | null, ok = true, name: string | null = id === null ? null : 'get_issue'): RecordMessage => ({
  role: 'tool',
  tool_call_id: id,
  name,
  content: ok ? '{"issue":{}}' : '{"ok":false}',
  tool_result: ok ? { ok: true } : { ok: false, kind: 'tool_call_limit', error: 'limit' },
});
const text = (content: string): RecordMessage => ({ role: 'assistant', content });
const reply = (content: string): RecordMessage => ({ role: 'user', content });

function record(messages: RecordMessage[], outcome = 'final_answer', actors: EpisodeRecord['provenance']['actors'] = [{ role: 'policy', kind: 'scripted', name: 'scripted-solution', version: '2' }]): EpisodeRecord {
  return { record_id: 'r1', messages, result: { outcome }, provenance: { actors, lineage: {} } } as unknown as EpisodeRecord;
}

describe('turns check', () => {
  it('passes what the runner writes', async () => {
    const written = [
      record([system, opening, calls('call_1', 'call_2'), answer('call_1'), answer('call_2'), text('#1 is p1; #2 is p0.')]),
      // A limit met mid-turn: the rest of the turn is still answered, refused.
      record([system, opening, calls('call_1', 'call_2'), answer('call_1'), answer('call_2', false)], 'tool_call_limit'),
      record([system, opening, { role: 'assistant', content: '<tool_call>{', malformed_tool_call: { reason: 'not JSON' } }, answer(null, false), text('Done.')]),
      // Out of wall time before executing the second call: the episode stopped there.
      record([system, opening, calls('call_1', 'call_2'), answer('call_1')], 'wall_time_limit'),
      record([system, opening, calls('call_1', 'call_2')], 'wall_time_limit'),
      record([system, opening, text('Which issue?'), reply('#2.'), calls('call_1'), answer('call_1'), text('Done.')]),
    ];
    for (const each of written) assert.deepEqual(turnProblems(each), [], JSON.stringify(each.messages.map((message) => message.role)));
    for (const lane of [PARALLEL_LANE, DIALOGUE_LANE] as const) {
      for (const each of readRecords(await conversationDataset(lane))) {
        assert.deepEqual(turnProblems(each), [], lane);
        assert.deepEqual(provenanceProblems(each, new Map(), false), [], lane);
      }
    }
  });

  it('names a tool message that answers no call of the turn before it, or answers one twice or out of order', () => {
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1', 'call_2'), answer('call_1'), answer('call_9'), text('Done.')])), [
      '/messages/4/tool_call_id: "call_9" is not a call of the assistant turn at /messages/2 (call_1, call_2)',
      '/messages/2/tool_calls/1: call_2 (get_issue) is never answered, and the episode did not stop there (outcome final_answer)',
    ]);
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1', 'call_2'), answer('call_1'), answer('call_1'), answer('call_2'), text('Done.')])), [
      '/messages/4/tool_call_id: call_1 is answered again (the assistant turn at /messages/2 gets one answer per call)',
    ]);
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1', 'call_2'), answer('call_2'), answer('call_1'), text('Done.')])), [
      '/messages/3/tool_call_id: call_2 is answered before call_1 (the calls of /messages/2 are answered in the order given)',
    ]);
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1'), answer('call_1'), text('So.'), answer('call_1'), text('Done.')])), [
      "/messages/5/tool_call_id: \"call_1\" answers no call: it does not follow an assistant turn with calls (or that turn's other results)",
    ]);
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1'), answer('call_1', true, 'close_issue'), text('Done.')])), [
      '/messages/3/name: "close_issue" answers call_1, a call of get_issue',
    ]);
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1'), answer('call_1'), calls('call_1'), answer('call_1'), text('Done.')])), [
      '/messages/4/tool_calls/0/id: call_1 is already the id of a call at /messages/2; a tool message could not say which it answers',
    ]);
    assert.deepEqual(turnProblems(record([system, opening, { role: 'assistant', content: '{', malformed_tool_call: { reason: 'not JSON' } }, answer('call_1'), text('Done.')])), [
      '/messages/3/tool_call_id: "call_1" answers the malformed call at /messages/2, which has no id (null expected)',
    ]);
  });

  it('names every call left unanswered, unless the episode ran out of wall time in that very turn', () => {
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1', 'call_2', 'call_3'), answer('call_1'), text('Done.')])), [
      '/messages/2/tool_calls/1: call_2 (get_issue) is never answered, and the episode did not stop there (outcome final_answer)',
      '/messages/2/tool_calls/2: call_3 (get_issue) is never answered, and the episode did not stop there (outcome final_answer)',
    ]);
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1', 'call_2'), answer('call_1')], 'step_limit')), [
      '/messages/2/tool_calls/1: call_2 (get_issue) is never answered, and the episode did not stop there (outcome step_limit)',
    ]);
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1', 'call_2'), answer('call_1'), text('Done.')], 'wall_time_limit')), [
      '/messages/2/tool_calls/1: call_2 (get_issue) is never answered, and the episode did not stop there (outcome wall_time_limit)',
    ], 'out of time, but later: the episode went on past the unanswered call');
    assert.deepEqual(turnProblems(record([system, opening, { role: 'assistant', content: '{', malformed_tool_call: { reason: 'not JSON' } }, text('Done.')])), [
      '/messages/2/malformed_tool_call: the malformed call is never answered (by a tool message with tool_call_id null)',
    ]);
  });

  it('names a simulated user turn that cuts into a turn of calls', () => {
    assert.deepEqual(turnProblems(record([system, opening, calls('call_1', 'call_2'), answer('call_1'), reply('Also #3.'), answer('call_2'), text('Done.')])), [
      '/messages/2/tool_calls/1: call_2 (get_issue) is never answered, and the episode did not stop there (outcome final_answer)',
      '/messages/4: a simulated user turn must answer an assistant turn without calls, not a tool message',
      "/messages/5/tool_call_id: \"call_2\" answers no call: it does not follow an assistant turn with calls (or that turn's other results)",
    ]);
  });
});

describe('user simulator provenance', () => {
  const user = { role: 'user', kind: 'scripted', name: 'scripted-user', version: '1' };
  const policy = { role: 'policy', kind: 'scripted', name: 'scripted-solution', version: '2' };
  const dialogue = [system, opening, text('Which issue?'), reply('#2.'), calls('call_1'), answer('call_1'), text('Done.')];
  const findings = (each: EpisodeRecord) =>
    provenanceProblems({ ...each, provenance: { ...each.provenance, lineage: { lane: 'l', lane_sha256: 'h', seed: 0, generate_command: 'x l --seeds 0..0 ', replay_command: 'replay r1' } as never } }, new Map(), false)
      .map((problem) => `provenance: ${problem.placed ? 'episodes.jsonl:7 (r1)' : 'episodes.jsonl:7'}: ${problem.reason}`);

  it('requires a user actor for user messages after the opening request', () => {
    assert.deepEqual(findings(record(dialogue, 'final_answer', [policy, user])), []);
    assert.deepEqual(findings(record(dialogue, 'final_answer', [policy])), [
      'provenance: episodes.jsonl:7 (r1): /provenance/actors: 1 user message after the opening request, but no user simulator (an actor with role "user") to say who wrote it',
    ]);
    assert.deepEqual(findings(record(dialogue, 'final_answer', [policy, user, { ...user, name: 'other-user' }])), [
      'provenance: episodes.jsonl:7 (r1): /provenance/actors: names 2 user simulators (role "user"); an episode has one',
    ]);
  });

  it('accepts a user actor without simulated turns: the simulator saw the final answer and was done', () => {
    assert.deepEqual(findings(record([system, opening, calls('call_1'), answer('call_1'), text('Done.')], 'final_answer', [policy, user])), []);
    assert.deepEqual(findings(record([system, opening, text('Done.')], 'final_answer', [policy])), []);
  });

  it('names a model simulator without a digest like any model actor', () => {
    assert.deepEqual(findings(record(dialogue, 'final_answer', [policy, { role: 'user', kind: 'model', name: 'qwen3:0.6b', version: 'x' }])), [
      'provenance: episodes.jsonl:7: actor qwen3:0.6b is a model with no digest',
    ]);
  });
});
