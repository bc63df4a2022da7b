// clients/python/nemo_gym_resources.py (a NeMo Gym resources server) and
// clients/python/verifiers_environment.py (a verifiers MultiTurnEnv) over a
// live `env serve`. Neither framework installs on this machine, so each is
// driven by a stub of its calling convention written from its source
// (tests/python/nemo_gym_stub_client.py: NeMo Gym 07d6b0d0, simple_agent and
// rollout collection; tests/python/verifiers_stub.py: verifiers a60a606e,
// MultiTurnEnv's rollout loop, stop conditions, cleanup and rubric). Solutions
// score 1.0 and wrong answers 0.0, sessions running at once stay apart, a wrong
// call comes back in the framework's own error shape, and the kept records
// replay and audit.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { recordedActions } from '../../src/verify/replay-policy.js';
import { environmentServers, generatedRecord } from '../environment-client.js';
import { pythonEnvironment, REPO_ROOT, temporaryDirectory, withoutVariable } from '../helpers.js';

withoutVariable('SOURCE_DATE_EPOCH');

const serve = environmentServers();
const toolWorld = loadLane('tool-world-v1', REPO_ROOT);
const TASKS = ['assignee-email', 'close-named-issue', 'relabel-issue'];

type Turn = { calls?: [string, unknown][]; text?: string };

interface Solution {
  turns: Turn[];
  /** The text of each tool message of generate's record, in order: what the tools answer this solution. */
  outputs: string[];
  catalog: string[];
}

/** A task's solution on a seed, as scripted turns, with what its tools answered under generate. */
async function solution(task: string, seed: number): Promise<Solution> {
  const record = await generatedRecord(toolWorld, task, seed);
  assert.equal(record.result.task_completed, true, `${task} s${seed}: generate's solution completes the task`);
  const turns = recordedActions(record.messages).map((action): Turn => {
    if (action.kind === 'final_text') return { text: action.text };
    if (action.kind === 'tool_call') return { calls: [[action.name, action.arguments]] };
    if (action.kind === 'tool_calls') return { calls: action.calls.map((call) => [call.name, call.arguments] as [string, unknown]) };
    throw new Error('a scripted solution never sends a malformed call');
  });
  const outputs = record.messages.flatMap((message) => (message.role === 'tool' ? [message.content as string] : []));
  return { turns, outputs, catalog: record.tools.map((tool) => tool.name).sort() };
}

function python(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(pythonEnvironment(), args, { timeout: 240_000, maxBuffer: 64 << 20 }, (error, stdout, stderr) => resolve({ status: error ? 1 : 0, stdout, stderr })),
  );
}

async function runScript(stub: string, url: string, script: object): Promise<any> {
  const file = join(temporaryDirectory(), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const run = await python([join(REPO_ROOT, 'tests/python', stub), url, file]);
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

/** Starts the NeMo Gym resources server on a free port; it is stopped after the file. */
async function startResources(envUrl: string): Promise<string> {
  const child = spawn(pythonEnvironment(), [join(REPO_ROOT, 'clients/python/nemo_gym_resources.py'), '--env-url', envUrl, '--port', '0', '--keep-records'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  after(() => {
    child.kill('SIGTERM');
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n')[0]!;
      if (stdout.includes('\n')) resolve(line.trim());
    });
    child.on('exit', (code) => reject(new Error(`nemo_gym_resources.py exited ${code}: ${stderr}`)));
  });
}

async function replayAndAudit(out: string, records: number) {
  const replayed = await replayDataset(out);
  assert.deepEqual([replayed.records, replayed.verified, replayed.failed], [records, records, 0], JSON.stringify(replayed.failures));
  assert.deepEqual((await auditDataset(out, { full: true })).findings, []);
}

const WRONG_CALLS: Turn[] = [
  { calls: [['no_such_tool', {}]] },
  { calls: [['search_issues', { limit: 'three' }]] },
  { calls: [['search_issues', '{"query": "sync", ']] },
  { text: 'Nothing to report.' },
];

describe('NeMo Gym resources server over env serve (a stub of simple_agent)', () => {
  it('plays solutions to reward 1.0 and wrong answers to 0.0 in sessions running at once; wrong calls answer as FastAPI would; records replay and audit', async () => {
    const out = join(temporaryDirectory(), 'nemo');
    const server = await serve(toolWorld, { outDir: out });
    const resources = await startResources(server.url);
    assert.match(resources, /^http:\/\/127\.0\.0\.1:\d+$/);

    // The rows come from the adapter's own --dataset, as a NeMo Gym dataset would.
    const rowsFile = join(temporaryDirectory(), 'rows.jsonl');
    const written = await python([join(REPO_ROOT, 'clients/python/nemo_gym_resources.py'), '--env-url', server.url, '--dataset', rowsFile, '--seeds', '1,6', '--tasks', TASKS.join(',')]);
    assert.equal(written.status, 0, written.stderr);
    const rows = readFileSync(rowsFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(rows.length, 6);
    const row = (task: string, seed: number) => rows.find((candidate) => candidate.task === task && candidate.seed === seed);
    assert.deepEqual(row('assignee-email', 6).responses_create_params.input.map((message: any) => message.role), ['system', 'user']);

    const solutions = await Promise.all(TASKS.map((task) => solution(task, 6)));
    assert.deepEqual(row('assignee-email', 6).responses_create_params.tools.map((tool: any) => tool.name).sort(), solutions[0]!.catalog);
    const plays = [
      ...TASKS.map((task, index) => ({ row: row(task, 6), turns: solutions[index]!.turns })),
      // The first row again, answered wrong: NeMo Gym's rollout 1 of that row, kept beside rollout 0.
      { row: row('assignee-email', 6), turns: [{ text: 'No idea.' }] },
      { row: row('close-named-issue', 1), turns: WRONG_CALLS },
    ];
    const report = await runScript('nemo_gym_stub_client.py', resources, { rows: plays });
    const rollouts = report.rollouts;
    for (const rollout of rollouts) assert.equal(rollout.error, undefined, rollout.error);

    assert.deepEqual(rollouts.map((rollout: any) => rollout.verify.reward), [1, 1, 1, 0, 0]);
    for (const [index, rollout] of rollouts.slice(0, 3).entries()) {
      // Each tool route answers the tool's own text; a call the runner rejects (relabel-issue's solution sends a
      // string for an integer first, and recovers) answers 422 in FastAPI's shape, naming the same field.
      assert.equal(rollout.calls.length, solutions[index]!.outputs.length);
      for (const [position, call] of rollout.calls.entries()) {
        const expected = solutions[index]!.outputs[position]!;
        const rejected = JSON.parse(expected);
        if (rejected.ok === false && rejected.kind === 'invalid_arguments') {
          assert.equal(call.status, 422, `${TASKS[index]} call ${position}`);
          assert.deepEqual(JSON.parse(call.output).detail.map((entry: any) => [entry.loc.slice(1).join('.'), entry.msg]), rejected.errors.map((error: any) => [error.path, error.reason]));
        } else {
          assert.deepEqual([call.status, call.output], [200, expected], `${TASKS[index]} call ${position}`);
        }
      }
      assert.ok(rollout.verify.episode_factory.predicates.every((predicate: any) => predicate.passed));
    }
    assert.ok(rollouts.slice(0, 3).some((rollout: any) => rollout.calls.some((call: any) => call.status === 422)), 'a solution recovers from a rejected call');
    // /verify answers the request it got (the row and the response) with the reward added.
    assert.equal(rollouts[0].verify.task, 'assignee-email');
    assert.deepEqual(rollouts[0].verify.responses_create_params, row('assignee-email', 6).responses_create_params);
    assert.equal(rollouts[3].verify.response.output.at(-1).content[0].text, 'No idea.');
    assert.ok(rollouts[3].verify.episode_factory.predicates.some((predicate: any) => !predicate.passed));

    // Each session is its own episode: one cookie per rollout, sent unchanged on each of its calls and its verify.
    const cookieOf = (cookies: Record<string, string>) => Object.values(cookies).join();
    const sessions = rollouts.map((rollout: any) => cookieOf(rollout.seed_cookies));
    assert.equal(new Set(sessions).size, plays.length);
    for (const [index, rollout] of rollouts.entries()) {
      for (const call of rollout.calls.filter((entry: any) => entry.sent)) assert.equal(cookieOf(call.cookies), sessions[index]);
      assert.equal(cookieOf(rollout.verify_cookies), sessions[index]);
      assert.equal(rollout.verify.episode_factory.episode_id, sessions[index]);
    }

    // Wrong calls: an unknown tool is a 404 and bad arguments a 422, in FastAPI's {"detail"} shape; arguments that are
    // not JSON never leave simple_agent.
    const [unknown, invalid, unparsed] = rollouts[4].calls;
    assert.deepEqual([unknown.status, unknown.tool_status, unknown.error_type], [404, 'failed', 'http_404']);
    assert.match(JSON.parse(unknown.output).detail, /unknown tool "no_such_tool"/);
    assert.equal(invalid.status, 422);
    const detail = JSON.parse(invalid.output).detail;
    assert.ok(Array.isArray(detail) && detail.length > 0);
    assert.ok(detail.every((entry: any) => entry.loc[0] === 'body' && typeof entry.msg === 'string'));
    assert.ok(detail.some((entry: any) => entry.loc.join('.') === 'body.limit'), JSON.stringify(detail));
    assert.equal(unparsed.sent, false);
    assert.match(JSON.parse(unparsed.output).error, /^Invalid tool call arguments: JSONDecodeError/);

    assert.equal(report.aggregate_metrics.status, 200);
    assert.equal(report.aggregate_metrics.body.agent_metrics['mean/reward'], 0.6);

    await replayAndAudit(out, plays.length);
    const ids = rollouts.map((rollout: any) => rollout.verify.episode_factory.record_id);
    assert.deepEqual(ids.slice(0, 4).filter((id: string) => id.includes('assignee-email')), [
      'tool-world-v1.assignee-email.s6.remote-nemo-gym.r0',
      'tool-world-v1.assignee-email.s6.remote-nemo-gym.r1',
    ]);
  });
});

describe('verifiers MultiTurnEnv over env serve (a stub of its rollout loop)', () => {
  it('plays a group of two rollouts at once (1.0 and 0.0) and solutions to 1.0; wrong calls are tool messages answering the model\'s ids; records replay and audit', async () => {
    const out = join(temporaryDirectory(), 'verifiers');
    const server = await serve(toolWorld, { outDir: out });
    const solutions = await Promise.all(TASKS.map((task) => solution(task, 6)));
    const groups = [
      { task: 'assignee-email', seed: 6, rollouts: [{ turns: solutions[0]!.turns }, { turns: [{ text: 'No idea.' }] }] },
      { task: 'close-named-issue', seed: 6, rollouts: [{ turns: solutions[1]!.turns }] },
      { task: 'relabel-issue', seed: 6, rollouts: [{ turns: solutions[2]!.turns }] },
      { task: 'close-named-issue', seed: 1, rollouts: [{ turns: WRONG_CALLS }] },
    ];
    const report = await runScript('verifiers_stub.py', server.url, { agent: 'vf-check', keep_records: true, tasks: TASKS, seeds: [1, 6], groups });
    assert.equal(report.rows, 6);
    const [pair, closed, relabelled, wrong] = report.groups;

    assert.deepEqual(pair.map((rollout: any) => rollout.reward), [1, 0]);
    assert.deepEqual([closed[0].reward, relabelled[0].reward, wrong[0].reward], [1, 1, 0]);
    assert.deepEqual(pair.map((rollout: any) => rollout.metrics), [{ episode_reward: 1, episode_completed: 1 }, { episode_reward: 0, episode_completed: 0 }]);
    // The two rollouts of the group ran at once, each on its own episode, numbered 0 and 1.
    assert.notEqual(pair[0].episode.episode_id, pair[1].episode.episode_id);
    assert.deepEqual(pair.map((rollout: any) => rollout.episode.record_id), [
      'tool-world-v1.assignee-email.s6.remote-vf-check.r0',
      'tool-world-v1.assignee-email.s6.remote-vf-check.r1',
    ]);

    for (const [index, rollout] of [pair[0], closed[0], relabelled[0]].entries()) {
      assert.equal(rollout.stop_condition, 'episode_done');
      const tools = rollout.completion.filter((message: any) => message.role === 'tool');
      assert.deepEqual(tools.map((message: any) => message.content), solutions[index]!.outputs, `${TASKS[index]}: env_response gives the tools' own text`);
      const asked = rollout.completion.flatMap((message: any) => (message.tool_calls ?? []).map((call: any) => call.id));
      assert.deepEqual(tools.map((message: any) => message.tool_call_id), asked, 'tool messages answer the model\'s own call ids');
      assert.deepEqual(rollout.model[0].tools.sort(), solutions[index]!.catalog, 'the model is offered the episode\'s catalog');
      assert.deepEqual(rollout.hooks.slice(0, 3), ['setup_state', 'stop:has_error', 'stop:episode_done']);
      assert.deepEqual(rollout.hooks.slice(-2), ['cleanup:render_state', 'cleanup:finish_episode']);
      assert.ok(rollout.hooks.includes('env_response'));
    }

    // Wrong calls: each a tool message answering the call, with the runner's error, and the rollout goes on to its answer.
    const answered = wrong[0].completion.filter((message: any) => message.role === 'tool');
    assert.deepEqual(answered.map((message: any) => message.tool_call_id), ['tool_0_0', 'tool_1_0', 'tool_2_0']);
    assert.deepEqual(answered.map((message: any) => [JSON.parse(message.content).ok, JSON.parse(message.content).kind]), [
      [false, 'unknown_tool'],
      [false, 'invalid_arguments'],
      [false, 'invalid_arguments'],
    ]);
    assert.equal(wrong[0].completion.at(-1).content, 'Nothing to report.');
    assert.equal(wrong[0].stop_condition, 'episode_done');

    await replayAndAudit(out, 5);
  });
});
