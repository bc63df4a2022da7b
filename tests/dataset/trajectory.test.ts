// The normalised trajectory that dedup and stats hash, for turns with one
// call (whose shape, and so whose hashes, must not move) and turns with
// several (every call counts), and for conversations with simulated user turns.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { hashCanonical } from '../../src/core/hashing.js';
import { readDataset } from '../../src/dataset/dataset-reader.js';
import { episodeText } from '../../src/dataset/dedup.js';
import { exactJaccard, recordShingles, recordTokens } from '../../src/dataset/minhash.js';
import { trajectory, trajectoryHash, turnCalls } from '../../src/dataset/trajectory.js';
import type { EpisodeRecord, RecordAssistantMessage } from '../../src/records/episode-record.js';
import { REPO_ROOT } from '../helpers.js';
import { conversationDataset, DIALOGUE_LANE, mostCallsInATurn, PARALLEL_LANE, readRecords, simulatedUserTurns } from '../conversation-lanes.js';

/** The trajectory as it was written before a turn could make several calls: the first call only, under `call`. */
function oneCallTrajectory(record: EpisodeRecord): unknown[] {
  return record.messages.map((message) => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, text: message.content };
      case 'assistant': {
        const call = message.tool_calls?.[0];
        let args = call?.arguments;
        try {
          if (call) args = canonicalJson(JSON.parse(call.arguments));
        } catch {
          args = call!.arguments;
        }
        return {
          role: 'assistant',
          text: message.content,
          ...(call ? { call: { tool: call.name, arguments: args } } : {}),
          ...(message.malformed_tool_call ? { malformed: message.malformed_tool_call.reason } : {}),
        };
      }
      case 'tool':
        return { role: 'tool', ok: message.tool_result.ok, kind: message.tool_result.kind ?? null, text: message.content };
    }
  });
}

function busiestTurn(record: EpisodeRecord): { index: number; message: RecordAssistantMessage } {
  const index = record.messages.findIndex((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) === mostCallsInATurn(record));
  return { index, message: record.messages[index] as RecordAssistantMessage };
}

describe('trajectory', () => {
  it('keeps the one-call shape of every existing record, so their trajectory hashes do not change', async () => {
    let records = 0;
    for (const name of ['tool-world-v1', 'tool-world-faults-v1']) {
      for (const { record } of (await readDataset(join(REPO_ROOT, 'datasets', name))).rows) {
        assert.ok(mostCallsInATurn(record) <= 1, `${record.record_id} makes one call a turn`);
        assert.equal(trajectoryHash(record), hashCanonical(oneCallTrajectory(record)), record.record_id);
        records++;
      }
    }
    assert.ok(records > 0);
  });

  it('lists every call of a turn with several, in order with canonical arguments, and a change to any of them is a new trajectory', async () => {
    const records = readRecords(await conversationDataset(PARALLEL_LANE));
    const record = records.find((candidate) => mostCallsInATurn(candidate) >= 2)!;
    assert.ok(record, 'the parallel lane has a turn with several calls');
    const { index, message } = busiestTurn(record);
    const turn = trajectory(record)[index]!;
    assert.ok(turn.role === 'assistant' && turn.call === undefined, 'a turn with several calls has no single `call`');
    assert.deepEqual(
      turnCalls(turn),
      message.tool_calls!.map((call) => ({ tool: call.name, arguments: canonicalJson(JSON.parse(call.arguments)) })),
    );
    // Each record with a one-call turn keeps `call` for it, alongside.
    const single = trajectory(records.find((candidate) => mostCallsInATurn(candidate) === 1)!).find((candidate) => candidate.role === 'assistant' && candidate.call);
    assert.ok(single && single.role === 'assistant' && single.calls === undefined);

    const edited: EpisodeRecord = structuredClone(record);
    const last = (edited.messages[index] as RecordAssistantMessage).tool_calls!.at(-1)!;
    last.arguments = JSON.stringify({ ...JSON.parse(last.arguments), number: 1 });
    assert.notEqual(trajectoryHash(edited), trajectoryHash(record), 'the last call of the turn is part of the trajectory');
    const renamed: EpisodeRecord = structuredClone(record);
    for (const each of renamed.messages) if (each.role === 'assistant') for (const call of each.tool_calls ?? []) call.id = `other_${call.id}`;
    assert.equal(trajectoryHash(renamed), trajectoryHash(record), 'call ids are not');
  });

  it('gives near and semantic dedup every call of a turn', async () => {
    const record = readRecords(await conversationDataset(PARALLEL_LANE)).find((candidate) => mostCallsInATurn(candidate) >= 2)!;
    const { index, message } = busiestTurn(record);
    const calls = message.tool_calls!;
    const text = episodeText(record);
    for (const call of calls) assert.ok(text.includes(`[call ${call.name} ${canonicalJson(JSON.parse(call.arguments))}]`), `${call.id} is in the embedded text`);
    const tokens = recordTokens(record);
    for (const call of calls) {
      for (const word of Object.values(JSON.parse(call.arguments) as Record<string, unknown>).map(String)) assert.ok(tokens.includes(word), `${call.id}'s ${word} is shingled`);
    }
    const edited: EpisodeRecord = structuredClone(record);
    (edited.messages[index] as RecordAssistantMessage).tool_calls!.at(-1)!.arguments = JSON.stringify({ number: 424242 });
    assert.ok(exactJaccard(recordShingles(edited), recordShingles(record)) < 1, 'a different last call makes different shingles');
  });

  it('keeps what the simulated user said: two dialogues that differ only in a reply are two trajectories', async () => {
    const record = readRecords(await conversationDataset(DIALOGUE_LANE)).find((candidate) => simulatedUserTurns(candidate) > 0)!;
    const reply = record.messages.findLastIndex((message) => message.role === 'user');
    assert.deepEqual(trajectory(record)[reply], { role: 'user', text: record.messages[reply]!.content });
    const edited: EpisodeRecord = structuredClone(record);
    edited.messages[reply]!.content = "I don't know, sorry.";
    assert.notEqual(trajectoryHash(edited), trajectoryHash(record));
    assert.ok(episodeText(record).includes(`user: ${record.messages[reply]!.content}`));
  });
});
