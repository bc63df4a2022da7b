import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { policyFactoryFor } from '../../src/selection/scripted-policy-factory.js';
import { planEpisodes } from '../../src/lanes/episode-plan.js';
import type { Lane } from '../../src/lanes/lane.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { UserSimulator } from '../../src/policy/user-simulator.js';
import type { EpisodeRecord, RecordMessage } from '../../src/records/episode-record.js';
import { validateAgainst } from '../../src/records/schema-registry.js';
import { produceEpisode } from '../../src/verify/episode-production.js';
import { replayRecord } from '../../src/verify/replay.js';
import { REPO_ROOT } from '../helpers.js';

let dialogue: Lane;
let parallel: Lane;

async function produce(lane: Lane, task: string, seed: number, variant: string, userFor?: () => UserSimulator): Promise<EpisodeRecord> {
  const spec = planEpisodes(lane, { from: seed, to: seed }, [task], [variant])[0]!;
  const record = await produceEpisode(spec, policyFactoryFor(lane), { producedAt: lane.document.produced_at, ...(userFor ? { userFor } : {}) });
  return JSON.parse(JSON.stringify(record)) as EpisodeRecord;
}

const failed = (record: EpisodeRecord) => record.result.predicates.filter((verdict) => !verdict.passed).map((verdict) => verdict.id);
const said = (messages: RecordMessage[]) => messages.slice(1).map((message) => `${message.role}:${message.role === 'assistant' && message.tool_calls ? message.tool_calls.map((call) => call.name).join('+') : message.content}`);

before(() => {
  dialogue = loadLane('issues-dialogue-v1', REPO_ROOT);
  parallel = loadLane('issues-parallel-v1', REPO_ROOT);
});

describe('a user who talks back', () => {
  it('asks first: the scripted user gives the withheld issue, the agent closes it, every predicate passes, and the user is an actor of its own', async () => {
    const record = await produce(dialogue, 'close-the-fixed-issue', 0, 'clean');
    assert.deepEqual(validateAgainst('episode-record.v1', record), []);
    const [, opening, question, reply, call] = record.messages;
    assert.equal(opening!.role, 'user');
    assert.doesNotMatch(opening!.content, /#\d+/, 'the first message withholds the issue');
    assert.deepEqual(question, { role: 'assistant', content: 'Which issue should I close?' });
    assert.equal(reply!.role, 'user');
    const number = JSON.parse((call as any).tool_calls[0].arguments).number;
    assert.ok(reply!.content.includes(`#${number}`), 'the reply gives the issue the agent then closes');
    assert.deepEqual(failed(record), []);
    assert.equal(record.result.task_completed, true);
    assert.deepEqual(
      record.provenance.actors.map((actor) => `${actor.role}:${actor.kind}:${actor.name}`),
      ['policy:scripted:scripted-solution', 'user:scripted:scripted-user', 'world:mcp-server:issues', 'factory:program:episode-factory'],
    );
    assert.deepEqual(await replayRecord(record, dialogue), { record_id: record.record_id, ok: true, problems: [] });
  });

  it('guesses and is corrected: the write on a guess fails the hidden checks although the agent ends up doing the right thing', async () => {
    const record = await produce(dialogue, 'close-the-fixed-issue', 0, 'guess_then_corrected');
    assert.deepEqual(said(record.messages).map((entry) => entry.split(':')[0]), ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
    assert.match(record.messages[5]!.content, /^That isn't what I meant\. It's issue #\d+/);
    assert.deepEqual(failed(record).sort(), ['asked-before-closing', 'touches-only-the-target']);
    assert.equal(record.result.task_completed, false);
    assert.equal((await replayRecord(record, dialogue)).ok, true);
  });

  it('asks once too often: the user says it already said so, and the questions predicate fails only that', async () => {
    const record = await produce(dialogue, 'comment-with-the-build', 1, 'asks_too_often');
    assert.equal(record.messages[2]!.content, 'Which issue is it?');
    assert.match(record.messages[3]!.content, /^As I said: Issue #\d+\.$/);
    assert.deepEqual(failed(record), ['did-not-ask-the-issue']);
    assert.equal((await replayRecord(record, dialogue)).ok, true);
  });

  it('replay derives the scripted user again, so an edited user reply is caught at its message', async () => {
    const record = await produce(dialogue, 'close-the-fixed-issue', 2, 'clean');
    const index = record.messages.findIndex((message, position) => message.role === 'user' && position > 1);
    record.messages[index] = { role: 'user', content: 'It is issue #1.' };
    const verdict = await replayRecord(record, dialogue);
    assert.equal(verdict.ok, false);
    assert.ok(verdict.problems.some((problem) => problem.includes(`/messages/${index}/content`)), verdict.problems.join('\n'));
  });

  it('replays a model-backed user from the record, never asking it again', async () => {
    let asked = 0;
    const modelUser = (): UserSimulator => ({
      actor: { role: 'user', kind: 'model', name: 'user-model', version: 'abc123', digest: 'sha256:abc123' },
      async respond(observation) {
        asked++;
        const last = observation.messages.at(-1)!;
        if (last.content.includes('?')) return { kind: 'reply', text: 'Sorry, it is the one from the release notes: ' + 'the login one.' };
        return { kind: 'done' };
      },
    });
    const record = await produce(dialogue, 'close-the-fixed-issue', 0, 'clean', modelUser);
    assert.equal(asked, 2);
    assert.equal(record.provenance.actors[1]!.kind, 'model');
    assert.equal(record.messages[3]!.content, 'Sorry, it is the one from the release notes: the login one.');
    // The reply never gave the issue, so the close came before the user said which: the hidden check sees it.
    assert.ok(failed(record).includes('asked-before-closing'));
    assert.deepEqual(await replayRecord(record, dialogue), { record_id: record.record_id, ok: true, problems: [] });
    assert.equal(asked, 2, 'replay did not ask the model');
    const edited = structuredClone(record);
    edited.messages[3] = { role: 'user', content: 'It is issue #1.' };
    // A model's reply is data: replaying an edited one rebuilds the same record, so what catches it is the
    // policy deriving its actions again, and the hash of the world. Here the scripted agent's close is unchanged.
    const verdict = await replayRecord(edited, dialogue);
    assert.equal(verdict.ok, true, 'an edited model reply replays as recorded');
  });

  it('a task without facts has no user simulator and its records are unchanged', async () => {
    const lane = loadLane('issues-v1', REPO_ROOT);
    const spec = planEpisodes(lane, { from: 0, to: 0 }, ['close-named-issue'])[0]!;
    const record = await produceEpisode(spec, policyFactoryFor(lane), { producedAt: lane.document.produced_at });
    assert.ok(!record.provenance.actors.some((actor) => actor.role === 'user'));
    assert.equal(record.messages.filter((message) => message.role === 'user').length, 1);
  });
});

describe('several tool calls in one turn', () => {
  it('batch_reads makes a parallel group in one turn, each call answered by its id, and replay verifies it', async () => {
    const record = await produce(parallel, 'two-assignees-emails', 1, 'batch_reads');
    const turns = record.messages.filter((message) => message.role === 'assistant' && message.tool_calls);
    assert.deepEqual(turns.map((turn) => (turn as any).tool_calls.map((call: any) => `${call.id}:${call.name}`)), [
      ['call_1:get_issue', 'call_2:get_issue'],
      ['call_3:get_user', 'call_4:get_user'],
    ]);
    const answers = record.messages.filter((message) => message.role === 'tool').map((message) => (message as any).tool_call_id);
    assert.deepEqual(answers, ['call_1', 'call_2', 'call_3', 'call_4']);
    assert.deepEqual(failed(record), []);
    assert.equal(record.result.steps, 3);
    assert.equal(record.result.tool_calls, 4);
    assert.deepEqual(await replayRecord(record, parallel), { record_id: record.record_id, ok: true, problems: [] });
  });

  it('clean makes the same calls one per turn', async () => {
    const record = await produce(parallel, 'two-assignees-emails', 1, 'clean');
    const turns = record.messages.filter((message) => message.role === 'assistant' && message.tool_calls);
    assert.deepEqual(turns.map((turn) => (turn as any).tool_calls.length), [1, 1, 1, 1]);
  });

  it('a fault fires on one call of a batch; the agent retries only that call, and replay re-fires the same fault for the same call', async () => {
    let record: EpisodeRecord | undefined;
    for (let seed = 0; seed < 8 && !record; seed++) {
      const candidate = await produce(parallel, 'compare-priorities', seed, 'batch_reads');
      if (candidate.recovery.faults_fired.some((fault) => fault.fault === 'rate-limited')) record = candidate;
    }
    assert.ok(record, 'some seed draws the rate-limit fault');
    const fault = record.recovery.faults_fired.find((entry) => entry.fault === 'rate-limited')!;
    assert.equal(fault.call, 2);
    const [first, retry] = record.messages.filter((message) => message.role === 'assistant' && message.tool_calls) as any[];
    assert.equal(first.tool_calls.length, 2);
    assert.equal(retry.tool_calls.length, 1);
    assert.equal(retry.tool_calls[0].arguments, first.tool_calls[1].arguments, 'only the failed call is sent again');
    assert.equal(record.result.task_completed, true);
    assert.equal(record.recovery.recovered, true);
    assert.deepEqual(await replayRecord(record, parallel), { record_id: record.record_id, ok: true, problems: [] });
    const edited = structuredClone(record);
    (edited.messages.find((message) => message.role === 'assistant' && message.tool_calls) as any).tool_calls.reverse();
    assert.equal((await replayRecord(edited, parallel)).ok, false, 'calls in another order are another episode');
  });
});
