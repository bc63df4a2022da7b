// `env serve` driven through real HTTP against real MCP worlds: a task's own
// solution earns reward 1 and the very judgement generate gives; a wrong
// answer earns 0 with each predicate's verdict; sixteen episodes at once each
// have their own world; idle episodes close; bad requests get JSON errors
// naming the field; one episode crashing leaves the others alone; a server
// world works; and kept records pass replay and audit.

import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { EnvironmentDataset } from '../../src/environment/environment-dataset.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { Lane } from '../../src/lanes/lane.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { readTrace } from '../../src/runner/trace.js';
import type { World } from '../../src/world/world-contract.js';
import { registerWorld } from '../../src/world/world-registry.js';
import { assistantTurns, drive, environmentServers, generatedRecord, get, post, request } from '../environment-client.js';
import { REPO_ROOT, temporaryDirectory, withoutVariable } from '../helpers.js';

withoutVariable('SOURCE_DATE_EPOCH');

const serve = environmentServers();

const toolWorld = loadLane('tool-world-v1', REPO_ROOT);

/** What must be the same whoever played the actions: the conversation, the judgement and the world's states. */
function judgement(record: EpisodeRecord) {
  return { messages: record.messages, recovery: record.recovery, result: record.result, tools: record.tools };
}

describe('env serve: reward and records', () => {
  it('gives a task\'s own solution reward 1 and exactly the judgement generate gives, on every task of the lane', async () => {
    const server = await serve(toolWorld);
    for (const task of toolWorld.document.tasks) {
      const seed = 5;
      const generated = await generatedRecord(toolWorld, task.id, seed);
      assert.equal(generated.result.task_completed, true, `${task.id}: the scripted solution completes the task`);
      const { reset, steps } = await drive(server.url, { task: task.id, seed, agent: 'solver' }, assistantTurns(generated));
      assert.deepEqual(reset.body.messages, [
        { role: 'system', content: toolWorld.document.system_prompt },
        { role: 'user', content: generated.messages[1]!.content },
      ]);
      assert.deepEqual(
        reset.body.tools.map((tool: any) => tool.function.name),
        generated.tools.map((tool) => tool.name),
      );
      assert.equal(reset.body.tools[0].type, 'function');
      assert.deepEqual(reset.body.tools[0].function.parameters, JSON.parse(generated.tools[0]!.input_schema));
      const last = steps.at(-1)!;
      assert.equal(last.status, 200, JSON.stringify(last.body));
      assert.equal(last.body.done, true);
      assert.deepEqual(
        steps.slice(0, -1).map((step) => step.body.done),
        steps.slice(0, -1).map(() => false),
      );
      assert.equal(last.body.reward.reward, 1, `${task.id}: ${JSON.stringify(last.body.reward)}`);
      assert.equal(last.body.reward.completed, true);
      assert.equal(last.body.reward.passed, last.body.reward.total);
      assert.deepEqual(last.body.reward.predicates, generated.result.predicates);
      assert.equal(last.body.outcome, 'final_answer');

      const kept = await post(server.url, `/episodes/${reset.body.episode_id}/record`);
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      const record = kept.body.record as EpisodeRecord;
      assert.equal(kept.body.verified, true);
      assert.equal(kept.body.written, false, 'without --out nothing is written');
      const status = await get(server.url, `/episodes/${reset.body.episode_id}`);
      assert.deepEqual([status.body.verified, status.body.written], [true, false], 'its status says the same');
      assert.deepEqual(judgement(record), judgement(generated));
      assert.equal(record.record_id, `tool-world-v1.${task.id}.s${seed}.remote-solver`);
      assert.equal(record.provenance.lineage.variant, 'remote:solver');
      assert.deepEqual(
        record.provenance.actors.find((actor) => actor.role === 'policy'),
        { role: 'policy', kind: 'remote', name: 'solver', version: 'unknown' },
      );
    }
  });

  it('answers each step with the tool messages under the runner\'s ids, and maps the client\'s ids to them', async () => {
    const server = await serve(toolWorld);
    const generated = await generatedRecord(toolWorld, 'comment-on-issue', 2);
    const turns = assistantTurns(generated);
    const opened = await post(server.url, '/reset', { task: 'comment-on-issue', seed: 2 });
    const first = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: turns[0] });
    assert.equal(first.status, 200);
    const calls = turns[0]!.tool_calls!;
    assert.deepEqual(first.body.assistant.tool_calls.map((call: any) => call.id), calls.map((_call, index) => `call_${index + 1}`));
    assert.deepEqual(first.body.tool_call_ids, Object.fromEntries(calls.map((call, index) => [call.id, `call_${index + 1}`])));
    const toolMessages = generated.messages.slice(3, 3 + calls.length);
    assert.deepEqual(
      first.body.messages,
      toolMessages.map((message: any) => ({ role: 'tool', content: message.content, tool_call_id: message.tool_call_id, name: message.name })),
    );
  });

  it('takes a chat completion\'s message as the server gave it (extra fields, content as parts), and shows the conversation so far in the status', async () => {
    const server = await serve(toolWorld);
    const opened = await post(server.url, '/reset', { task: 'assignee-email', seed: 0 });
    const generated = await generatedRecord(toolWorld, 'assignee-email', 0);
    const turn = assistantTurns(generated)[0]!;
    const first = await post(server.url, '/step', {
      episode_id: opened.body.episode_id,
      message: { ...turn, refusal: null, reasoning_content: 'thinking…', annotations: [], tool_calls: turn.tool_calls!.map((call, index) => ({ index, ...call })) },
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const status = await get(server.url, `/episodes/${opened.body.episode_id}`);
    assert.equal(status.body.state, 'awaiting_action');
    assert.deepEqual(status.body.messages, [...opened.body.messages, first.body.assistant, ...first.body.messages]);
    const answered = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: { role: 'assistant', content: [{ type: 'text', text: 'I could ' }, { type: 'text', text: 'not tell.' }] } });
    assert.equal(answered.body.assistant.content, 'I could not tell.');
    const listed = await get(server.url, '/episodes');
    assert.equal(listed.body.episodes[0].messages, undefined, 'the list leaves the conversations out');
    assert.equal(listed.body.episodes[0].state, 'done');
  });

  it('gives a wrong answer reward 0 with each predicate\'s verdict, and passes a string of arguments that is not JSON to the runner as the agent\'s own', async () => {
    const server = await serve(toolWorld);
    const opened = await post(server.url, '/reset', { task: 'close-named-issue', seed: 1, agent: { name: 'guesser', version: 'step-40' } });
    const broken = await post(server.url, '/step', {
      episode_id: opened.body.episode_id,
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'close_issue', arguments: '{"number": 12,' } }] },
    });
    assert.equal(broken.status, 200);
    const result = JSON.parse(broken.body.messages[0].content);
    assert.equal(result.ok, false);
    assert.equal(result.kind, 'invalid_arguments');
    const answered = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: { role: 'assistant', content: 'Done, it is closed.' } });
    assert.equal(answered.status, 200);
    assert.equal(answered.body.done, true);
    const { reward } = answered.body;
    assert.equal(reward.reward, 0);
    assert.equal(reward.completed, false);
    assert.deepEqual(reward.predicates.map((predicate: any) => predicate.id), ['is-closed', 'closed-as-completed', 'touches-only-the-target', 'names-the-assignee']);
    assert.equal(reward.predicates.find((predicate: any) => predicate.id === 'is-closed').passed, false);
    assert.match(reward.predicates.find((predicate: any) => predicate.id === 'is-closed').detail, /./);
    assert.equal(reward.passed, reward.predicates.filter((predicate: any) => predicate.passed).length);
    assert.ok(reward.passed < reward.total);
    // The broken call is the agent's behaviour: it is in the record, which replays.
    const kept = await post(server.url, `/episodes/${opened.body.episode_id}/record`);
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal(kept.body.record.messages[2].tool_calls[0].arguments, JSON.stringify('{"number": 12,'));
    assert.deepEqual(kept.body.record.provenance.actors[0], { role: 'policy', kind: 'remote', name: 'guesser', version: 'step-40' });
  });

  it('keeps records in --out as a dataset replay and audit accept, refuses a second record of the same (task, seed, agent) naming it, and picks the dataset up again after a torn write', async () => {
    const out = join(temporaryDirectory(), 'online');
    let server = await serve(toolWorld, { outDir: out });
    const ids: string[] = [];
    for (const [task, seed] of [['assignee-email', 0], ['relabel-issue', 3]] as const) {
      const { reset } = await drive(server.url, { task, seed, agent: 'solver' }, assistantTurns(await generatedRecord(toolWorld, task, seed)));
      const kept = await post(server.url, `/episodes/${reset.body.episode_id}/record`);
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      assert.equal(kept.body.written, true);
      ids.push(kept.body.record_id);
      const again = await post(server.url, `/episodes/${reset.body.episode_id}/record`);
      assert.equal(again.status, 200, 'keeping the same episode twice is one record');
    }
    // A wrong episode is a record too.
    const wrong = await drive(server.url, { task: 'assignee-email', seed: 1, agent: 'solver' }, [{ role: 'assistant', content: 'No idea.' }]);
    assert.equal((await post(server.url, `/episodes/${wrong.reset.body.episode_id}/record`)).status, 200);
    const twice = await drive(server.url, { task: 'assignee-email', seed: 0, agent: 'solver' }, [{ role: 'assistant', content: 'No idea.' }]);
    const refused = await post(server.url, `/episodes/${twice.reset.body.episode_id}/record`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'duplicate_record');
    assert.equal(refused.body.existing_record_id, ids[0]);
    assert.match(refused.body.error.message, new RegExp(ids[0]!.replace(/\./g, '\\.')));
    // Another agent may keep the same (task, seed).
    const other = await drive(server.url, { task: 'assignee-email', seed: 0, agent: 'other' }, [{ role: 'assistant', content: 'No idea.' }]);
    assert.equal((await post(server.url, `/episodes/${other.reset.body.episode_id}/record`)).status, 200);

    const replayed = await replayDataset(out);
    assert.deepEqual([replayed.records, replayed.verified, replayed.failed], [4, 4, 0], JSON.stringify(replayed.failures));
    const audited = await auditDataset(out, { full: true });
    assert.deepEqual(audited.findings, []);
    assert.equal(audited.records, 4);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    assert.equal(manifest.operation, 'env');
    assert.deepEqual(manifest.counts, { records: 4, completed: 2 });

    // Killed in the middle of a write: a torn last line, and the manifest of before.
    await server.close();
    const before = readFileSync(join(out, 'episodes.jsonl'), 'utf8');
    appendFileSync(join(out, 'episodes.jsonl'), before.split('\n')[0]!.slice(0, 500));
    server = await serve(toolWorld, { outDir: out });
    assert.equal(readFileSync(join(out, 'episodes.jsonl'), 'utf8'), before, 'the torn line is cut off; every earlier record is as it was');
    assert.deepEqual((await auditDataset(out, { sample: 0 })).findings, []);
    const info = await get(server.url, '/tasks');
    assert.deepEqual(info.body.records, { out, written: 4 });
    const after = await drive(server.url, { task: 'assignee-email', seed: 0, agent: 'solver' }, [{ role: 'assistant', content: 'No idea.' }]);
    assert.equal((await post(server.url, `/episodes/${after.reset.body.episode_id}/record`)).body.error.code, 'duplicate_record', 'the ids already there are known after a restart');
  });

  it('refuses an --out that holds a dataset generate wrote, or that another server holds', async () => {
    const directory = temporaryDirectory();
    writeFileSync(join(directory, 'manifest.json'), JSON.stringify({ format: 'episode-factory.manifest.v1', operation: 'generate', lanes: [], factory_version: '0', counts: { records: 0 }, files: [] }));
    assert.throws(() => EnvironmentDataset.open(directory, toolWorld), /holds a dataset written by generate/);
    const out = join(directory, 'taken');
    const first = EnvironmentDataset.open(out, toolWorld);
    writeFileSync(join(out, '.env-serve.lock'), `${process.ppid}\n`);
    assert.throws(() => EnvironmentDataset.open(out, toolWorld), /in use by another env serve/);
    first.close();
  });
});

describe('env serve: many episodes, and their isolation', () => {
  it('runs 16 episodes at once, each on its own world: half solve, half do nothing, and each world shows only its own changes', async () => {
    const server = await serve(toolWorld, { maxEpisodes: 16 });
    const seed = 4;
    const generated = await generatedRecord(toolWorld, 'relabel-issue', seed);
    const turns = assistantTurns(generated);
    const results = await Promise.all(
      Array.from({ length: 16 }, async (_unused, index) => {
        const solve = index % 2 === 0;
        const { reset, steps } = await drive(server.url, { task: 'relabel-issue', seed, agent: `agent-${index}` }, solve ? turns : [{ role: 'assistant', content: 'Nothing to do.' }]);
        const kept = await post(server.url, `/episodes/${reset.body.episode_id}/record`);
        return { solve, reward: steps.at(-1)!.body.reward, record: kept.body.record as EpisodeRecord, id: reset.body.episode_id as string };
      }),
    );
    assert.equal(new Set(results.map((result) => result.id)).size, 16);
    for (const { solve, reward, record } of results) {
      assert.equal(reward.reward, solve ? 1 : 0);
      if (solve) assert.equal(record.result.final_snapshot_sha256, generated.result.final_snapshot_sha256);
      else assert.equal(record.result.final_snapshot_sha256, record.result.initial_snapshot_sha256, 'a world nobody wrote to is unchanged');
      assert.equal(record.result.initial_snapshot_sha256, generated.result.initial_snapshot_sha256);
    }
  });

  it('refuses more running episodes than --max-episodes with 503 and the fix, and takes more once one is done', async () => {
    const server = await serve(toolWorld, { maxEpisodes: 2 });
    const first = await post(server.url, '/reset', { task: 'assignee-email', seed: 0 });
    await post(server.url, '/reset', { task: 'assignee-email', seed: 1 });
    const third = await post(server.url, '/reset', { task: 'assignee-email', seed: 2 });
    assert.equal(third.status, 503);
    assert.equal(third.body.error.code, 'too_many_episodes');
    assert.match(third.body.error.fix, /--max-episodes/);
    await post(server.url, '/step', { episode_id: first.body.episode_id, message: { content: 'No idea.' } });
    assert.equal((await post(server.url, '/reset', { task: 'assignee-email', seed: 2 })).status, 200, 'a finished episode holds no world');
  });

  it('closes an idle episode (disposing its world) and says so to a late step', async () => {
    const server = await serve(toolWorld, { idleTimeoutMs: 150 });
    const opened = await post(server.url, '/reset', { task: 'assignee-email', seed: 0 });
    assert.equal(server.episodes(), 1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(server.episodes(), 0);
    const late = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: { content: 'hello' } });
    assert.equal(late.status, 404);
    assert.equal(late.body.error.code, 'episode_closed');
    assert.match(late.body.error.message, /without a request \(--idle-timeout\)/);
    const status = await get(server.url, `/episodes/${opened.body.episode_id}`);
    assert.equal(status.status, 404);
  });

  it('closes an episode on DELETE, and a step after that is a 404 that says why', async () => {
    const server = await serve(toolWorld);
    const opened = await post(server.url, '/reset', { task: 'assignee-email', seed: 0 });
    const status = await get(server.url, `/episodes/${opened.body.episode_id}`);
    assert.equal(status.body.state, 'awaiting_action');
    const deleted = await request(server.url, 'DELETE', `/episodes/${opened.body.episode_id}`);
    assert.deepEqual([deleted.status, deleted.body.closed], [200, true]);
    const late = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: { content: 'hello' } });
    assert.equal(late.status, 404);
    assert.match(late.body.error.message, /deleted by the client/);
  });
});

describe('env serve: bad requests', () => {
  it('answers each with a JSON error: its status, a code, the field, and a fix', async () => {
    const server = await serve(toolWorld);
    const cases: [Promise<{ status: number; body: any }>, number, string, string?][] = [
      [request(server.url, 'POST', '/reset', undefined, '{"task": '), 400, 'invalid_json'],
      [post(server.url, '/reset', { task: 'nope' }), 400, 'invalid_request', 'task'],
      [post(server.url, '/reset', {}), 400, 'invalid_request', 'task'],
      [post(server.url, '/reset', { task: 'assignee-email', seed: 'one' }), 400, 'invalid_request', 'seed'],
      [post(server.url, '/reset', { task: 'assignee-email', seed: -1 }), 400, 'invalid_request', 'seed'],
      [post(server.url, '/reset', { task: 'assignee-email', agent: 'has space' }), 400, 'invalid_request', 'agent'],
      [post(server.url, '/reset', { task: 'assignee-email', tasks: 'x' }), 400, 'invalid_request', 'tasks'],
      [post(server.url, '/step', { message: { content: 'x' } }), 400, 'invalid_request', 'episode_id'],
      [post(server.url, '/step', { episode_id: 'x' }), 400, 'invalid_request', 'message'],
      [post(server.url, '/step', { episode_id: 'x', message: { role: 'user', content: 'x' } }), 400, 'invalid_request', 'message.role'],
      [post(server.url, '/step', { episode_id: 'x', message: { tool_calls: [{ function: { arguments: '{}' } }] } }), 400, 'invalid_request', 'message.tool_calls[0].function.name'],
      [post(server.url, '/step', { episode_id: 'x', message: { tool_calls: {} } }), 400, 'invalid_request', 'message.tool_calls'],
      [post(server.url, '/step', { episode_id: 'no-such-episode', message: { content: 'x' } }), 404, 'unknown_episode'],
      [get(server.url, '/episodes/no-such-episode'), 404, 'unknown_episode'],
      [get(server.url, '/episodes/%E0%A4%A'), 400, 'invalid_request'],
      [post(server.url, '/episodes/no-such-episode/record'), 404, 'unknown_episode'],
      [request(server.url, 'PUT', '/step', {}), 405, 'method_not_allowed'],
      [get(server.url, '/reset'), 405, 'method_not_allowed'],
      [get(server.url, '/nowhere'), 404, 'not_found'],
      [request(server.url, 'POST', '/step', undefined, JSON.stringify({ episode_id: 'x', message: { content: 'x'.repeat(5 * 1024 * 1024) } })), 413, 'body_too_large'],
    ];
    for (const [pending, status, code, field] of cases) {
      const answer = await pending;
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, code);
      assert.equal(typeof answer.body.error.message, 'string');
      if (field !== undefined) {
        assert.equal(answer.body.error.field, field);
        assert.ok(answer.body.error.message.startsWith(field), answer.body.error.message);
      }
    }
    const refusedPage = await fetch(`${server.url}/tasks`, { headers: { origin: 'http://evil.example' } });
    assert.equal(refusedPage.status, 403);
  });

  it('refuses a step after done (409, once the client was told) and a record of an episode not done (409)', async () => {
    const server = await serve(toolWorld);
    const opened = await post(server.url, '/reset', { task: 'assignee-email', seed: 0 });
    const early = await post(server.url, `/episodes/${opened.body.episode_id}/record`);
    assert.deepEqual([early.status, early.body.error.code], [409, 'not_done']);
    assert.equal((await post(server.url, '/step', { episode_id: opened.body.episode_id, message: { content: 'No idea.' } })).body.done, true);
    const again = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: { content: 'No idea.' } });
    assert.deepEqual([again.status, again.body.error.code], [409, 'episode_done']);
  });

  it('ends an episode that outlives the lane\'s wall_time_ms waiting for its agent: the next step hears done (not applied), and the record replays', async () => {
    const lane = laneVariant(toolWorld, 'hasty-world-v1', { limits: { ...toolWorld.document.limits, wall_time_ms: 300 } });
    const server = await serve(lane);
    const opened = await post(server.url, '/reset', { task: 'assignee-email', seed: 0 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal((await get(server.url, `/episodes/${opened.body.episode_id}`)).body.state, 'done');
    const late = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: { content: 'The email is x@example.com.' } });
    assert.equal(late.status, 200);
    assert.deepEqual([late.body.done, late.body.applied, late.body.outcome, late.body.messages], [true, false, 'wall_time_limit', []]);
    assert.equal(late.body.reward.reward, 0);
    const kept = await post(server.url, `/episodes/${opened.body.episode_id}/record`);
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal(kept.body.record.result.outcome_detail, 'model turn ran past wall_time_ms (300)');
    const again = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: { content: 'hello?' } });
    assert.equal(again.status, 409);
  });

  it('refuses a step while the previous one is still answered (409), and answers the first', async () => {
    const lane = laneVariant(toolWorld, 'slow-world-v1', { faults: { select: 'each', faults: [{ id: 'slow', kind: 'latency', params: { ms: 800 } }] } });
    const server = await serve(lane);
    // A seed whose solution's first call is well formed, so that it reaches the (slow) tool.
    const { seed, generated } = await firstSeed(lane, 'assignee-email', (record) => record.provenance.lineage.variant === 'clean');
    const opened = await post(server.url, '/reset', { task: 'assignee-email', seed });
    const turn = assistantTurns(generated)[0];
    const first = post(server.url, '/step', { episode_id: opened.body.episode_id, message: turn });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await post(server.url, '/step', { episode_id: opened.body.episode_id, message: turn });
    assert.deepEqual([second.status, second.body.error.code], [409, 'step_in_flight']);
    const answered = await first;
    assert.equal(answered.status, 200);
    assert.equal(answered.body.messages.length, turn!.tool_calls!.length);
  });
});

/** The first seed of the lane's range whose generated record for the task fits. */
async function firstSeed(lane: Lane, task: string, fits: (record: EpisodeRecord) => boolean): Promise<{ seed: number; generated: EpisodeRecord }> {
  for (let seed = lane.seeds.from; seed <= lane.seeds.to; seed++) {
    const generated = await generatedRecord(lane, task, seed);
    if (fits(generated)) return { seed, generated };
  }
  throw new Error(`no seed of ${lane.name} fits for ${task}`);
}

/** A copy of a lane under another name, with some fields replaced; written to a file of its own name. */
function laneVariant(lane: Lane, name: string, fields: Record<string, unknown>): Lane {
  const directory = temporaryDirectory();
  const path = join(directory, `${name}.json`);
  writeFileSync(path, JSON.stringify({ ...lane.document, name, ...fields }));
  return loadLane(path);
}

interface Fuse {
  fuses: number[];
  blown: boolean;
}

/** A world whose final snapshot throws once `blow` was called: the episode crashes while being judged. */
const fuseWorld: World<Fuse> = {
  name: 'fuse-box',
  version: '0.0.1',
  description: 'A world that crashes its own episode on request.',
  configSchema: { type: 'object', additionalProperties: false },
  tools: [
    { name: 'read_fuses', description: 'Lists the fuses.', inputSchema: { type: 'object', properties: {}, additionalProperties: false } },
    { name: 'blow', description: 'Blows the fuse box.', inputSchema: { type: 'object', properties: {}, additionalProperties: false } },
  ],
  init: (random) => ({ fuses: [random.int(1, 9), random.int(1, 9)], blown: false }),
  call: (state, tool) => {
    if (tool === 'blow') state.blown = true;
    return { ok: true, value: { fuses: state.fuses } };
  },
  snapshot: (state) => {
    if (state.blown) throw new Error('the fuse box is on fire');
    return { fuses: state.fuses };
  },
};

describe('env serve: a crash of one episode', () => {
  it('answers that episode\'s client with 500 and its own failure, closes it, and leaves the others going', async () => {
    registerWorld(fuseWorld);
    const directory = temporaryDirectory();
    const path = join(directory, 'fuse-lane.json');
    writeFileSync(
      path,
      JSON.stringify({
        format: 'episode-factory.lane.v1',
        name: 'fuse-lane',
        description: 'A lane over the fuse box.',
        produced_at: '2026-12-01T00:00:00Z',
        world: { name: 'fuse-box' },
        policy: { kind: 'scripted' },
        seeds: '0..3',
        system_prompt: 'Mind the fuses.',
        tasks: [
          {
            id: 'read',
            title: 'Read the fuses',
            user: 'Which fuses are there?',
            solution: [{ call: 'read_fuses', arguments: {}, as: 'got' }, { answer: 'Fuses {{got.fuses}}.' }],
            predicates: [{ id: 'read-once', calls: { tool: 'read_fuses', ok: true }, equals: 1 }],
          },
        ],
      }),
    );
    const lane = loadLane(path);
    const server = await serve(lane);
    const call = (name: string) => ({ role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name, arguments: '{}' } }] });
    const healthy = await post(server.url, '/reset', { seed: 1 });
    const doomed = await post(server.url, '/reset', { seed: 1 });
    assert.equal((await post(server.url, '/step', { episode_id: doomed.body.episode_id, message: call('blow') })).status, 200);
    assert.equal((await post(server.url, '/step', { episode_id: healthy.body.episode_id, message: call('read_fuses') })).status, 200);
    const crashed = await post(server.url, '/step', { episode_id: doomed.body.episode_id, message: { content: 'Done.' } });
    assert.equal(crashed.status, 500);
    assert.equal(crashed.body.error.code, 'episode_failed');
    assert.match(crashed.body.error.message, /the fuse box is on fire/);
    const gone = await get(server.url, `/episodes/${doomed.body.episode_id}`);
    assert.equal(gone.status, 404);
    assert.match(gone.body.error.message, /crashed: the fuse box is on fire/);
    const finished = await post(server.url, '/step', { episode_id: healthy.body.episode_id, message: { content: 'Done.' } });
    assert.equal(finished.status, 200);
    assert.equal(finished.body.reward.reward, 1);
    const fresh = await drive(server.url, { seed: 2 }, [call('read_fuses') as any, { role: 'assistant', content: 'Done.' }]);
    assert.equal(fresh.steps.at(-1)!.body.reward.reward, 1, 'the server goes on after a crash');
  });
});

describe('env serve: worlds and traces', () => {
  it('serves a server world (a real third-party MCP server per episode) and its records replay', async () => {
    const lane = loadLane('filesystem-server-v1', REPO_ROOT);
    const out = join(temporaryDirectory(), 'fs');
    const server = await serve(lane, { outDir: out });
    const tasks = ['update-setting', 'read-setting'];
    const answers = await Promise.all(
      tasks.map(async (task) => {
        const { seed, generated } = await firstSeed(lane, task, (record) => record.result.task_completed);
        const { reset, steps } = await drive(server.url, { task, seed, agent: 'fs-solver' }, assistantTurns(generated));
        const kept = await post(server.url, `/episodes/${reset.body.episode_id}/record`);
        return { generated, reward: steps.at(-1)!.body.reward, kept };
      }),
    );
    for (const { generated, reward, kept } of answers) {
      assert.equal(reward.reward, 1, JSON.stringify(reward));
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      assert.deepEqual(judgement(kept.body.record), judgement(generated));
    }
    const replayed = await replayDataset(out);
    assert.deepEqual([replayed.verified, replayed.failed], [2, 0], JSON.stringify(replayed.failures));
  });

  it('plays a task with a user simulator: the user\'s reply comes back from the step, and the record replays', async () => {
    const lane = loadLane('issues-dialogue-v1', REPO_ROOT);
    const generated = await generatedRecord(lane, 'close-the-fixed-issue', 2);
    const server = await serve(lane);
    const { reset, steps } = await drive(server.url, { task: 'close-the-fixed-issue', seed: 2 }, assistantTurns(generated));
    const replies = steps.flatMap((step) => step.body.messages.filter((message: any) => message.role === 'user').map((message: any) => message.content));
    assert.deepEqual(replies, generated.messages.slice(2).filter((message) => message.role === 'user').map((message) => message.content));
    assert.ok(replies.length > 0);
    assert.equal(steps.at(-1)!.body.done, true);
    const kept = await post(server.url, `/episodes/${reset.body.episode_id}/record`);
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.deepEqual(kept.body.record.result.predicates, generated.result.predicates);
  });

  it('writes each episode\'s trace with --trace, the episode and the replay of its record in one file', async () => {
    const traces = temporaryDirectory();
    const server = await serve(toolWorld, { traceDir: traces });
    const generated = await generatedRecord(toolWorld, 'assignee-email', 0);
    const { reset } = await drive(server.url, { task: 'assignee-email', seed: 0 }, assistantTurns(generated));
    await post(server.url, `/episodes/${reset.body.episode_id}/record`);
    await request(server.url, 'DELETE', `/episodes/${reset.body.episode_id}`);
    const files = readdirSync(traces);
    assert.deepEqual(files, [`tool-world-v1.assignee-email.s0.remote-remote-agent.${reset.body.episode_id}.jsonl`]);
    const { events, problems } = await readTrace(join(traces, files[0]!));
    assert.deepEqual(problems, []);
    const kinds = events.map((event) => `${event.phase}:${event.event_type}`);
    for (const kind of ['env:env_episode_opened', 'generate:episode_started', 'generate:model_turn', 'generate:loop_finished', 'replay:loop_finished', 'env:env_episode_closed']) {
      assert.ok(kinds.includes(kind), `${kind} in ${kinds.join(', ')}`);
    }
  });
});
