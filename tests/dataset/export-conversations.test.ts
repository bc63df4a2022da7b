// SFT rows and DPO pairs of conversations that are not one call a turn and one
// user message: several tool calls in one assistant turn (issues-parallel-v1)
// and a user simulator answering the agent's questions (issues-dialogue-v1),
// in both argument forms.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { toChatMessages, type ChatMessage } from '../../src/records/chat-format.js';
import { continuationEnd, exportDpo, type DpoRow } from '../../src/dataset/export-dpo.js';
import { exportSft, type SftRow } from '../../src/dataset/export-sft.js';
import { codecByName } from '../../src/models/codecs/codec-registry.js';
import { renderTranscript } from '../../src/models/codecs/model-codec.js';
import type { EpisodeRecord, RecordMessage } from '../../src/records/episode-record.js';
import { temporaryDirectory } from '../helpers.js';
import { conversationDataset, DIALOGUE_LANE, mostCallsInATurn, PARALLEL_LANE, readRecords, simulatedUserTurns } from '../conversation-lanes.js';

const work = temporaryDirectory();
const read = <T>(path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as T);

/** Each assistant turn's calls, answered by the tool messages that follow it, one per call in the order given. */
function assertEveryCallAnswered(messages: readonly ChatMessage[], where: string): number {
  let busiest = 0;
  messages.forEach((message, index) => {
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return;
    busiest = Math.max(busiest, calls.length);
    const replies = messages.slice(index + 1, index + 1 + calls.length);
    assert.deepEqual(
      replies.map((reply) => [reply.role, reply.tool_call_id, reply.name]),
      calls.map((call) => ['tool', call.id, call.function.name]),
      `${where}: message ${index} has its ${calls.length} calls answered by id`,
    );
    assert.notEqual(messages[index + 1 + calls.length]?.role, 'tool', `${where}: no extra tool message after message ${index}`);
  });
  return busiest;
}

describe('export sft with several calls in a turn', () => {
  for (const form of ['string', 'object'] as const) {
    it(`writes one tool_calls list with every call and one tool message per call (arguments as ${form === 'string' ? 'strings' : 'objects'})`, async () => {
      const dir = await conversationDataset(PARALLEL_LANE);
      const records = new Map(readRecords(dir).map((record) => [record.record_id, record]));
      const out = join(work, `parallel-sft-${form}.jsonl`);
      const summary = await exportSft(dir, out, { arguments: form });
      assert.equal(summary.arguments_kept_as_text, 0);
      let severalCallTurns = 0;
      for (const row of read<SftRow>(out)) {
        const record = records.get(row.record_id)!;
        assertEveryCallAnswered(row.messages, row.record_id);
        const recorded = record.messages.flatMap((message) => (message.role === 'assistant' ? [message.tool_calls ?? []] : []));
        const written = row.messages.filter((message) => message.role === 'assistant').map((message) => message.tool_calls ?? []);
        assert.deepEqual(
          written.map((calls) => calls.map((call) => [call.id, call.type, call.function.name, call.function.arguments])),
          recorded.map((calls) => calls.map((call) => [call.id, 'function', call.name, form === 'string' ? call.arguments : JSON.parse(call.arguments)])),
          `${row.record_id}: every call of every turn, in order`,
        );
        severalCallTurns += written.filter((calls) => calls.length > 1).length;
      }
      assert.ok(severalCallTurns > 0, 'the export holds turns with several calls');
    });
  }

  it('renders every call of a turn in the `text` column, the way the family writes several', async () => {
    const dir = await conversationDataset(PARALLEL_LANE);
    const codec = codecByName('hermes');
    const out = join(work, 'parallel-sft-hermes.jsonl');
    await exportSft(dir, out, { renderer: { name: codec.name, render: (messages, tools) => renderTranscript(codec, messages, tools) } });
    let checked = 0;
    for (const row of read<SftRow>(out)) {
      const calls = row.messages.flatMap((message) => message.tool_calls ?? []);
      // The system turn describes the call format; the conversation starts at the first user turn.
      const conversation = row.text!.slice(row.text!.indexOf('<|im_start|>user'));
      assert.equal(conversation.split('<tool_call>\n{"name": ').length - 1, calls.length, row.record_id);
      assert.equal(conversation.split('<tool_response>').length - 1, calls.length, `${row.record_id}: one response per call`);
      if (row.messages.some((message) => (message.tool_calls?.length ?? 0) > 1)) checked++;
    }
    assert.ok(checked > 0);
  });

  it('keeps several calls in DPO pairs too, each answered inside prompt, chosen or rejected', async () => {
    const dir = await conversationDataset(PARALLEL_LANE);
    const out = join(work, 'parallel-dpo.jsonl');
    const summary = await exportDpo(dir, out, { arguments: 'object' });
    assert.ok(summary.pairs > 0);
    let busiest = 0;
    for (const row of read<DpoRow>(out)) {
      busiest = Math.max(busiest, assertEveryCallAnswered([...row.prompt, ...row.chosen], `${row.chosen_record_id} chosen`));
      assertEveryCallAnswered([...row.prompt, ...row.rejected], `${row.rejected_record_id} rejected`);
    }
    assert.ok(busiest > 1, 'a pair holds a turn with several calls');
  });
});

describe('export with a user simulator', () => {
  it('keeps the simulated user turns in SFT rows, as user messages where the record has them', async () => {
    const dir = await conversationDataset(DIALOGUE_LANE);
    const records = new Map(readRecords(dir).map((record) => [record.record_id, record]));
    const out = join(work, 'dialogue-sft.jsonl');
    const summary = await exportSft(dir, out);
    assert.ok(summary.exported > 0);
    for (const row of read<SftRow>(out)) {
      const record = records.get(row.record_id)!;
      assert.ok(simulatedUserTurns(record) > 0);
      assert.equal(canonicalJson(row.messages), canonicalJson(toChatMessages(record.messages)), 'the whole conversation, the user simulator included');
    }
  });

  it('pairs at the step that differs and ends each continuation before the user simulator speaks again', async () => {
    const dir = await conversationDataset(DIALOGUE_LANE);
    const records = new Map(readRecords(dir).map((record) => [record.record_id, record]));
    const out = join(work, 'dialogue-dpo.jsonl');
    const summary = await exportDpo(dir, out);
    const rows = read<DpoRow>(out);
    assert.equal(rows.length, summary.pairs);
    assert.equal(summary.same_agent_moves, 0);
    assert.deepEqual(Object.keys(summary.pairs_by_rejected_variant), ['asks_too_often', 'guess_then_corrected']);
    for (const row of rows) {
      for (const [side, id] of [['chosen', row.chosen_record_id], ['rejected', row.rejected_record_id]] as const) {
        const record = records.get(id)!;
        const chat = toChatMessages(record.messages);
        const end = continuationEnd(record.messages, row.prompt.length);
        assert.equal(canonicalJson([...row.prompt, ...row[side]]), canonicalJson(chat.slice(0, end)), `${side} is the episode up to the user's next turn`);
        assert.ok(record.messages[end] === undefined || record.messages[end]!.role === 'user', `${side} stops right before a user turn or at the end`);
        assert.ok(row[side].every((message) => message.role !== 'user'), `${side} holds no user turn for the trainer to learn`);
        assert.equal(row[side][0]!.role, 'assistant');
      }
      assert.notEqual(canonicalJson(row.chosen), canonicalJson(row.rejected));
      // The lane's chosen episode asks for what it was not told before it acts.
      assert.ok(!row.chosen[0]!.tool_calls && row.chosen[0]!.content.endsWith('?'), `chosen asks: ${row.chosen[0]!.content}`);
      if (row.rejected_variant === 'asks_too_often') {
        assert.deepEqual(row.rejected.map((message) => message.role), ['assistant'], 'rejected asks too: a different question');
        assert.ok(row.rejected[0]!.content.endsWith('?'));
      } else {
        assert.ok(row.rejected[0]!.tool_calls, 'rejected acts on a guess');
        assert.equal(row.rejected.at(-1)!.role, 'assistant', 'and reports it, before the user corrects it');
      }
    }
  });

  it('leaves out a pair whose conversations first differ in what the user simulator said', async () => {
    const dialogue = readRecords(await conversationDataset(DIALOGUE_LANE));
    const chosen = dialogue.find((record) => record.result.task_completed && simulatedUserTurns(record) > 0)!;
    const reply = chosen.messages.findIndex((message, index) => index > 1 && message.role === 'user');
    const rejected: EpisodeRecord = structuredClone(chosen);
    rejected.record_id = `${chosen.record_id}.other-reply`;
    rejected.provenance.lineage.variant = 'other_reply';
    rejected.result.task_completed = false;
    rejected.messages[reply]!.content = "I don't know, sorry.";
    const dir = join(work, 'same-moves');
    mkdirSync(dir);
    writeFileSync(join(dir, 'episodes.jsonl'), [chosen, rejected].map((record) => JSON.stringify(record)).join('\n') + '\n');
    const summary = await exportDpo(dir, join(dir, 'dpo.jsonl'));
    assert.equal(summary.pairs, 0, 'up to the reply the agent did the same: nothing to prefer');
    assert.equal(summary.same_agent_moves, 1);
  });

  it('cuts at a user message of the record, not at the user turn that carries the harness reply to a malformed call', () => {
    const messages: RecordMessage[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'ask' },
      { role: 'assistant', content: '<tool_call>{', malformed_tool_call: { reason: 'not JSON' } },
      { role: 'tool', tool_call_id: null, name: null, content: 'malformed tool call', tool_result: { ok: false, kind: 'malformed_tool_call' } },
      { role: 'assistant', content: 'Which one?' },
      { role: 'user', content: 'The first.' },
      { role: 'assistant', content: 'Done.' },
    ];
    assert.equal(toChatMessages(messages)[3]!.role, 'user', 'the chat form gives the harness reply role user');
    assert.equal(continuationEnd(messages, 2), 5);
    assert.equal(continuationEnd(messages, 6), 7, 'no user turn after: the end of the conversation');
  });
});

describe('the conversation lanes hold what these tests need', () => {
  it('several calls in a turn, and simulated user turns', async () => {
    assert.ok(readRecords(await conversationDataset(PARALLEL_LANE)).some((record) => mostCallsInATurn(record) > 1));
    assert.ok(readRecords(await conversationDataset(DIALOGUE_LANE)).every((record) => simulatedUserTurns(record) > 0));
  });
});
