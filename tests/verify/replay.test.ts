import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { policyFactoryFor } from '../../src/selection/scripted-policy-factory.js';
import { planEpisodes } from '../../src/lanes/episode-plan.js';
import type { Lane } from '../../src/lanes/lane.js';
import { loadLane, parseLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { validateAgainst } from '../../src/records/schema-registry.js';
import { produceEpisode } from '../../src/verify/episode-production.js';
import { replayRecord } from '../../src/verify/replay.js';
import { REPO_ROOT } from '../helpers.js';

let lane: Lane;
const records = new Map<string, EpisodeRecord>();

async function recordFor(task: string, seed: number): Promise<EpisodeRecord> {
  const key = `${task}/${seed}`;
  if (!records.has(key)) {
    const spec = planEpisodes(lane, { from: seed, to: seed }, [task])[0]!;
    const record = await produceEpisode(spec, policyFactoryFor(lane), { producedAt: '2026-12-01T00:00:00Z' });
    records.set(key, JSON.parse(JSON.stringify(record)));
  }
  return structuredClone(records.get(key)!);
}

before(() => {
  lane = loadLane('tool-world-v1', REPO_ROOT);
});

describe('replay verification', () => {
  it('verifies an untouched record from the record alone', async () => {
    const record = await recordFor('close-named-issue', 3);
    assert.deepEqual(validateAgainst('episode-record.v1', record), []);
    assert.equal(record.result.task_completed, true);
    assert.deepEqual(await replayRecord(record, lane), { record_id: 'tool-world-v1.close-named-issue.s3', ok: true, problems: [] });
  });

  it('verifies records with repaired calls (wrong_type_first) too', async () => {
    for (let seed = 0; seed < 8; seed++) {
      const record = await recordFor('find-open-bugs', seed);
      if (record.provenance.lineage.variant !== 'wrong_type_first') continue;
      assert.equal(record.recovery.error_turns, 1);
      assert.equal(record.recovery.recovered, true);
      assert.equal((await replayRecord(record, lane)).ok, true);
      return;
    }
    assert.fail('no wrong_type_first episode among seeds 0..7');
  });

  it('rejects a hand-edited tool result, naming the call and the place', async () => {
    const record = await recordFor('assignee-email', 2);
    const index = record.messages.findIndex((message) => message.role === 'tool' && message.tool_result.ok);
    const message = record.messages[index] as { content: string; tool_call_id: string };
    message.content = message.content.replace(/"assignee":"[^"]+"/, '"assignee":"someone.else99"');
    const verdict = await replayRecord(record, lane);
    assert.equal(verdict.ok, false);
    assert.ok(verdict.problems.some((problem) => problem.startsWith(`tool result of ${message.tool_call_id} differs at /messages/${index}/content`)), verdict.problems.join('\n'));
  });

  it('rejects a record whose outcome was edited to claim success', async () => {
    const record = await recordFor('relabel-issue', 1);
    const last = record.messages.at(-1)!;
    last.content = 'Done.';
    const predicates = record.result.predicates;
    assert.ok(predicates.every((predicate) => predicate.passed));
    let verdict = await replayRecord(record, lane);
    assert.equal(verdict.ok, false, 'the answer no longer names the title, so a hidden predicate flips');
    assert.ok(verdict.problems.some((problem) => problem.includes('a hidden predicate verdict differs at /result/predicates/4')), verdict.problems.join('\n'));

    const forged = await recordFor('relabel-issue', 1);
    forged.result.task_completed = false;
    verdict = await replayRecord(forged, lane);
    assert.deepEqual(verdict.problems, ['differs at /result/task_completed: record has false, replay gives true']);
  });

  it('rejects a record whose call arguments were changed, because results and final state differ', async () => {
    const record = await recordFor('close-named-issue', 5);
    const call = (record.messages.find((message) => message.role === 'assistant' && message.tool_calls) as any).tool_calls[0];
    const args = JSON.parse(call.arguments);
    args.number += 1;
    call.arguments = JSON.stringify(args);
    const verdict = await replayRecord(record, lane);
    assert.equal(verdict.ok, false);
    assert.ok(verdict.problems.some((problem) => problem.includes('tool result of call_')), verdict.problems.join('\n'));
  });

  it('stores tool-call arguments as JSON text, and rejects a record whose arguments are not JSON', async () => {
    const record = await recordFor('find-open-bugs', 2);
    const index = record.messages.findIndex((message) => message.role === 'assistant' && message.tool_calls);
    const call = (record.messages[index] as any).tool_calls[0];
    assert.equal(typeof call.arguments, 'string');
    assert.equal(JSON.parse(call.arguments).query, JSON.parse(call.arguments).query);
    call.arguments = '{"query": ';
    assert.deepEqual((await replayRecord(record, lane)).problems, [`/messages/${index}/tool_calls/0/arguments is not JSON-encoded arguments`]);
  });

  it('rejects a record whose seed was changed', async () => {
    const record = await recordFor('comment-on-issue', 4);
    record.provenance.lineage.seed = 5;
    assert.equal((await replayRecord(record, lane)).ok, false);
  });

  it('refuses to replay against a lane that has changed since the record was made', async () => {
    const record = await recordFor('close-named-issue', 3);
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));
    document.tasks[1].title = 'Close an issue (edited)';
    const edited = parseLane(JSON.stringify(document), join(REPO_ROOT, 'lanes', 'tool-world-v1.json'));
    const verdict = await replayRecord(record, edited);
    assert.equal(verdict.ok, false);
    assert.match(verdict.problems[0]!, /lane tool-world-v1 has changed since this record was made/);
  });

  it('names a different factory or SDK version instead of diffing every field', async () => {
    const record = await recordFor('close-named-issue', 3);
    record.provenance.lineage.factory_version = '0.0.9';
    const verdict = await replayRecord(record, lane);
    assert.equal(verdict.problems.length, 1);
    assert.match(verdict.problems[0]!, /^made by episode-factory 0\.0\.9 with @modelcontextprotocol\/sdk@[\d.]+, but this is episode-factory [\d.]+/);
  });

  it('rejects a record that breaks the record schema, with pointers', async () => {
    const record = (await recordFor('close-named-issue', 3)) as any;
    delete record.provenance.lineage.seed;
    record.provenance.actors = [];
    const verdict = await replayRecord(record, lane);
    assert.equal(verdict.ok, false);
    assert.ok(verdict.problems.includes('schema: /provenance/lineage/seed: missing required field'), verdict.problems.join('\n'));
    assert.ok(verdict.problems.some((problem) => problem.startsWith('schema: /provenance/actors')), verdict.problems.join('\n'));
  });
});
