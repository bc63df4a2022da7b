// `episode-factory env serve` as a user runs it: the installed command in its
// own process, its URL on stderr (and on stdout with --json), episodes driven
// over HTTP, records kept in --out that `replay` and `audit` accept, a clean
// exit on SIGTERM with every world disposed, a kill in the middle of writing a
// record that loses nothing earlier, and the Python client (standard library
// only) running the worked example and the GRPO reward function against it.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { assistantTurns, drive, generatedRecord, get, post } from '../environment-client.js';
import { startFakeOpenAI } from '../fixtures/fake-openai.js';
import { CLI, REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

interface Running {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `env serve` with --json and waits for the line that says where it listens. */
function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const environment = { ...process.env, ...env };
  delete environment.SOURCE_DATE_EPOCH;
  const child = spawn(process.execPath, [CLI, 'env', 'serve', ...args, '--json'], { cwd: REPO_ROOT, env: environment });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('close', (status) => resolve(status)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`env serve did not start: ${stderr}`));
    }, 30_000);
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
      const line = stdout.split('\n').find((text) => text.startsWith('{'));
      if (line && stdout.includes('\n')) {
        clearTimeout(timer);
        resolve({ child, url: JSON.parse(line).url, stderr: () => stderr, exited });
      }
    });
    void exited.then((status) => {
      clearTimeout(timer);
      reject(new Error(`env serve exited ${status} before listening: ${stderr}`));
    });
  });
}

const lane = loadLane('tool-world-v1', REPO_ROOT);

describe('env serve (the installed command)', () => {
  it('says where it listens, serves episodes, keeps records replay and audit accept, and exits cleanly on SIGTERM', async () => {
    const directory = temporaryDirectory();
    const out = join(directory, 'online');
    const traces = join(directory, 'traces');
    const server = await startServe(['tool-world-v1', '--port', '0', '--out', out, '--trace', traces]);
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(server.stderr(), new RegExp(`^env: serving tool-world-v1 at ${server.url.replace(/\./g, '\\.')}$`, 'm'));
    const generated = await generatedRecord(lane, 'close-named-issue', 6);
    const { reset, steps } = await drive(server.url, { task: 'close-named-issue', seed: 6, agent: 'cli-test' }, assistantTurns(generated));
    assert.equal(steps.at(-1)!.body.reward.reward, 1);
    const kept = await post(server.url, `/episodes/${reset.body.episode_id}/record`);
    assert.equal(kept.body.written, true, JSON.stringify(kept.body));
    // One episode still running when the server is stopped.
    const open = await post(server.url, '/reset', { task: 'assignee-email', seed: 2 });
    assert.equal(open.status, 200);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.stderr());
    assert.match(server.stderr(), /env: SIGTERM: closing 2 episodes\nenv: stopped\n$/);
    assert.equal(existsSync(join(out, '.env-serve.lock')), false, 'the lock is released');
    const replayed = runCli(REPO_ROOT, 'replay', out);
    assert.equal(replayed.status, 0, replayed.stdout + replayed.stderr);
    assert.match(replayed.stdout, /1 records, 1 verified, 0 failed/);
    const audited = runCli(REPO_ROOT, 'audit', out, '--full');
    assert.equal(audited.status, 0, audited.stdout + audited.stderr);
    assert.ok(existsSync(join(traces, `tool-world-v1.close-named-issue.s6.remote-cli-test.${reset.body.episode_id}.jsonl`)));
  });

  it('loses no earlier record when killed between appending a record and listing it, and lists it on the next start', async () => {
    const out = join(temporaryDirectory(), 'online');
    const first = await startServe(['tool-world-v1', '--out', out]);
    const keep = async (url: string, task: string, seed: number) => {
      const { reset } = await drive(url, { task, seed }, [{ role: 'assistant', content: 'No idea.' }]);
      return post(url, `/episodes/${reset.body.episode_id}/record`);
    };
    assert.equal((await keep(first.url, 'assignee-email', 0)).status, 200);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);

    const doomed = await startServe(['tool-world-v1', '--out', out], { EPISODE_FACTORY_FAILPOINT: 'env-record-appended' });
    await assert.rejects(keep(doomed.url, 'assignee-email', 1), 'the process is killed while the record is written');
    assert.equal(await doomed.exited, null);
    assert.ok(existsSync(join(out, '.env-serve.lock')), 'a killed server leaves its lock');
    const stale = runCli(REPO_ROOT, 'audit', out, '--sample', '0');
    assert.equal(stale.status, 1, 'between the append and the manifest the directory does not audit');

    const again = await startServe(['tool-world-v1', '--out', out]);
    assert.equal((await get(again.url, '/tasks')).body.records.written, 2, 'the whole record appended before the kill is kept');
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
    const audited = runCli(REPO_ROOT, 'audit', out, '--full');
    assert.equal(audited.status, 0, audited.stdout + audited.stderr);
    assert.match(audited.stdout, /2 records, 2 reproduced/);
  });

  it('refuses bad flags with the fix, exit 2', () => {
    const port = runCli(REPO_ROOT, 'env', 'serve', 'tool-world-v1', '--port', 'eighty');
    assert.equal(port.status, 2);
    assert.match(port.stderr, /^episode-factory: --port "eighty" is not a port — fix: /m);
    const idle = runCli(REPO_ROOT, 'env', 'serve', 'tool-world-v1', '--idle-timeout', '-3');
    assert.equal(idle.status, 2);
    assert.match(idle.stderr, /--idle-timeout "-3" is not a number of seconds/);
    const missing = runCli(REPO_ROOT, 'env', 'serve', 'no-such-lane');
    assert.equal(missing.status, 2);
    const help = runCli(REPO_ROOT, 'env', 'serve', '--help');
    assert.equal(help.status, 0);
    for (const flag of ['--port', '--host', '--idle-timeout', '--max-episodes', '--out', '--trace', '--json', 'Examples:']) assert.ok(help.stdout.includes(flag), flag);
  });
});

describe('the Python client (standard library only)', () => {
  it('runs the worked example: rewards printed, records kept by the server and written by the example, all of which replay', async () => {
    const directory = temporaryDirectory();
    const serverOut = join(directory, 'server');
    const localOut = join(directory, 'local');
    const server = await startServe(['tool-world-v1', '--out', serverOut]);
    try {
      const run = spawnSync('python3', ['-I', '-B', join(REPO_ROOT, 'clients', 'python', 'example_agent.py'), '--url', server.url, '--episodes', '7', '--out', localOut], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(run.status, 0, run.stdout + run.stderr);
      const episodes = run.stdout.split('\n').filter((line) => line.startsWith('episode '));
      assert.equal(episodes.length, 7, run.stdout);
      for (const line of episodes) assert.match(line, /^episode \d+: task [a-z-]+ seed \d+: reward [01] \(\d+\/\d+ predicates\), outcome [a-z_]+, \d+ steps$/);
      assert.match(run.stdout, /^mean reward \d\.\d\d over 7 episodes$/m);
      assert.equal(run.stdout.match(/verified by replay, written to /g)?.length, 7);
      assert.equal(run.stderr, '');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    const local = runCli(REPO_ROOT, 'replay', localOut);
    assert.equal(local.status, 0, local.stdout + local.stderr);
    assert.match(local.stdout, /7 records, 7 verified, 0 failed/);
    const audited = runCli(REPO_ROOT, 'audit', serverOut, '--full');
    assert.equal(audited.status, 0, audited.stdout + audited.stderr);
  });

  it('runs the worked example with a model served through an OpenAI-compatible API: rewards from the hidden checks, records that replay', async () => {
    // The model server is the project's fake (it speaks the chat-completions wire protocol; no weights can be fetched here), in this process: so python runs without blocking it.
    const model = await startFakeOpenAI({ flavour: 'vllm' });
    const directory = temporaryDirectory();
    const serverOut = join(directory, 'online');
    const server = await startServe(['tool-world-v1', '--out', serverOut]);
    try {
      const child = spawn('python3', ['-I', '-B', join(REPO_ROOT, 'clients', 'python', 'example_agent.py'), '--url', server.url, '--episodes', '5', '--model', 'fake-qwen:1b', '--base-url', model.baseUrl]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += String(chunk)));
      child.stderr.on('data', (chunk) => (stderr += String(chunk)));
      const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
      assert.equal(status, 0, stdout + stderr);
      assert.match(stdout, /5 episodes of model fake-qwen:1b/);
      assert.equal(stdout.match(/: reward 1 \(/g)?.length, 5, stdout);
      assert.match(stdout, /^mean reward 1\.00 over 5 episodes$/m);
      assert.equal(stdout.match(/record tool-world-v1\.[a-z-]+\.s0\.remote-fake-qwen-1b verified by replay/g)?.length, 5, stdout);
      const bodies = model.chatBodies() as { tools?: unknown[]; seed?: unknown }[];
      assert.ok(bodies.length >= 5 && bodies.every((body) => body.tools?.length === 9 && Number.isInteger(body.seed)), 'each turn sent the episode\'s tools and a seed');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await model.close();
    }
    const replayed = runCli(REPO_ROOT, 'replay', serverOut);
    assert.equal(replayed.status, 0, replayed.stdout + replayed.stderr);
    assert.match(replayed.stdout, /5 records, 5 verified, 0 failed/);
    const audited = runCli(REPO_ROOT, 'audit', serverOut, '--full');
    assert.equal(audited.status, 0, audited.stdout + audited.stderr);
  });

  it('scores completions as a GRPO reward function: a solution 1.0, a wrong answer 0.0, tool calls written as text replayed too', async () => {
    const directory = temporaryDirectory();
    const server = await startServe(['tool-world-v1', '--out', join(directory, 'out')]);
    try {
      const solved = await generatedRecord(lane, 'assignee-email', 3);
      assert.equal(solved.result.task_completed, true);
      const turns = assistantTurns(solved);
      // The same solution as one text completion: its calls in <tool_call> blocks, then its answer.
      const calls = turns.filter((turn) => turn.tool_calls).flatMap((turn) => turn.tool_calls!);
      const text = calls.map((call) => `<tool_call>{"name": "${call.function.name}", "arguments": ${call.function.arguments}}</tool_call>`).join('\n');
      const script = `
import json, sys
sys.path.insert(0, ${JSON.stringify(join(REPO_ROOT, 'clients', 'python'))})
from episode_factory_env import make_reward_function, prompt_rows
url, turns, text = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
reward = make_reward_function(url, keep_records=True)
rows = prompt_rows(url, seeds=[3], tasks=["assignee-email"])
assert rows[0]["task"] == "assignee-email" and rows[0]["seed"] == 3 and rows[0]["prompt"][0]["role"] == "system", rows[0]
completions = [turns, [{"role": "assistant", "content": "I do not know."}], text + "\\n" + turns[-1]["content"]]
print(json.dumps(reward(completions, task=["assignee-email"] * 3, seed=[3] * 3)))
`;
      const run = spawnSync('python3', ['-I', '-B', '-c', script, server.url, JSON.stringify(turns), text], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(run.status, 0, run.stdout + run.stderr);
      const scores = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
      assert.equal(scores[0], 1.0);
      assert.equal(scores[1], 0.0);
      assert.equal(scores[2], 1.0, 'the calls parsed out of the text reach the same world state and answer');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
