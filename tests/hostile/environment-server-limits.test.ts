// `env serve` against deep and huge JSON, over real HTTP on real worlds. A
// /step whose tool-call arguments nest thousands of levels (as JSON or in a
// string), or a /reset with a nested task or agent, used to answer 500
// "Maximum call stack size exceeded" and leave the episode stuck, holding a
// --max-episodes slot until the idle timeout. Now each is a 400 naming the
// limit and the episode goes on; arguments at the limit are taken, recorded
// and replayed; a step that fails in a way the server did not foresee closes
// its episode at once and frees its slot, and records already kept stay; and
// the Python GRPO reward function scores such completions 0.0 instead of
// crashing.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MAX_JSON_DEPTH } from '../../src/core/bounded-json.js';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { EnvironmentEpisode } from '../../src/environment/environment-episode.js';
import { MAX_BODY_BYTES, MAX_BODY_DEPTH, startEnvironmentServer, type EnvironmentServer, type EnvironmentServerOptions } from '../../src/environment/environment-server.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { Action } from '../../src/policy/policy-contract.js';
import { assistantTurns, drive, generatedRecord, get, post, request } from '../environment-client.js';
import { nested, REPO_ROOT, runWithin, temporaryDirectory, withoutVariable } from '../helpers.js';

const TIMEOUT = 120_000;

withoutVariable('SOURCE_DATE_EPOCH');

const servers: EnvironmentServer[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function serve(options: Partial<EnvironmentServerOptions> = {}): Promise<EnvironmentServer> {
  const server = await startEnvironmentServer({ lane, ...options });
  servers.push(server);
  return server;
}

const lane = loadLane('tool-world-v1', REPO_ROOT);

/** JSON text nested `depth` levels (objects and lists in turn) around `leaf`, written as text: JSON.stringify itself overflows on such a value. */
function deepText(depth: number, leaf = '1'): string {
  const objects = Math.ceil(depth / 2);
  const lists = Math.floor(depth / 2);
  return '{"k":['.repeat(lists) + (objects > lists ? '{"k":' : '') + leaf + (objects > lists ? '}' : '') + ']}'.repeat(lists);
}

/** A /step body with one call of `tool` whose arguments are `argumentsText` (raw JSON text, spliced in). */
function stepText(episodeId: string, tool: string, argumentsText: string): string {
  return `{"episode_id": ${JSON.stringify(episodeId)}, "message": {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": ${JSON.stringify(tool)}, "arguments": ${argumentsText}}}]}}`;
}

const raw = (server: EnvironmentServer, path: string, text: string) => request(server.url, 'POST', path, undefined, text);

describe('env serve refuses deep JSON with a 400 naming the limit, and the episode goes on', { timeout: 4 * TIMEOUT }, () => {
  it('a /step whose arguments nest 5,000 deep, as JSON or in a string, is refused; the episode takes its next step, is solved and kept, and its slot was never lost', { timeout: TIMEOUT }, async () => {
    const server = await serve({ maxEpisodes: 1, outDir: join(temporaryDirectory('ef-hostile-env-'), 'online') });
    const generated = await generatedRecord(lane, 'assignee-email', 3);
    const opened = await post(server.url, '/reset', { task: 'assignee-email', seed: 3 });
    assert.equal(opened.status, 200, JSON.stringify(opened.body));
    const id = opened.body.episode_id as string;
    const tool = assistantTurns(generated)[0]!.tool_calls![0]!.function.name;

    const asJson = await raw(server, '/step', stepText(id, tool, deepText(5000)));
    assert.equal(asJson.status, 400, JSON.stringify(asJson.body));
    assert.equal(asJson.body.error.code, 'body_too_deep');
    assert.equal(asJson.body.error.message, `the body of POST /step nests deeper than ${MAX_BODY_DEPTH} levels (the limit on nesting)`);
    assert.match(asJson.body.error.fix, new RegExp(`arguments may nest at most ${MAX_JSON_DEPTH} levels`));

    const inString = await raw(server, '/step', stepText(id, tool, JSON.stringify(deepText(5000))));
    assert.equal(inString.status, 400, JSON.stringify(inString.body));
    assert.equal(inString.body.error.code, 'invalid_request');
    assert.equal(inString.body.error.field, 'message.tool_calls[0].function.arguments');
    assert.equal(inString.body.error.message, `message.tool_calls[0].function.arguments: nests deeper than ${MAX_JSON_DEPTH} levels (the limit on nesting of a tool call's arguments)`);

    // Nothing of either reached the runner: the episode still waits for its first action, with the opening messages only.
    const status = await get(server.url, `/episodes/${id}`);
    assert.equal(status.status, 200, JSON.stringify(status.body));
    assert.equal(status.body.state, 'awaiting_action');
    assert.equal(status.body.messages.length, 2);

    const steps = [];
    for (const message of assistantTurns(generated)) steps.push(await post(server.url, '/step', { episode_id: id, message }));
    assert.deepEqual(
      steps.map((step) => step.status),
      steps.map(() => 200),
    );
    assert.equal(steps.at(-1)!.body.reward.reward, 1);
    const kept = await post(server.url, `/episodes/${id}/record`);
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.deepEqual([kept.body.verified, kept.body.written, kept.body.records], [true, true, 1]);
    const next = await post(server.url, '/reset', { task: 'assignee-email', seed: 4 });
    assert.equal(next.status, 200, `the one --max-episodes slot is free: ${JSON.stringify(next.body)}`);
  });

  it('arguments nesting exactly the limit are taken, recorded and replayed; one level more is refused', { timeout: TIMEOUT }, async () => {
    const server = await serve();
    const opened = await post(server.url, '/reset', { task: 'close-named-issue', seed: 1 });
    const id = opened.body.episode_id as string;
    const over = await raw(server, '/step', stepText(id, 'close_issue', deepText(MAX_JSON_DEPTH + 1)));
    assert.equal(over.status, 400, JSON.stringify(over.body));
    assert.equal(over.body.error.field, 'message.tool_calls[0].function.arguments');
    const overInString = await raw(server, '/step', stepText(id, 'close_issue', JSON.stringify(deepText(MAX_JSON_DEPTH + 1))));
    assert.equal(overInString.status, 400, JSON.stringify(overInString.body));
    const at = await raw(server, '/step', stepText(id, 'close_issue', deepText(MAX_JSON_DEPTH)));
    assert.equal(at.status, 200, JSON.stringify(at.body));
    assert.equal(JSON.parse(at.body.messages[0].content).kind, 'invalid_arguments', 'the world refuses such arguments as the agent\'s mistake');
    const answered = await post(server.url, '/step', { episode_id: id, message: { role: 'assistant', content: 'It is closed.' } });
    assert.equal(answered.body.done, true);
    const kept = await post(server.url, `/episodes/${id}/record`);
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal(kept.body.verified, true);
    assert.equal(kept.body.record.messages[2].tool_calls[0].arguments, deepText(MAX_JSON_DEPTH));
  });

  it('a /reset with a task or an agent nested 5,000 deep is refused with the limit; a nested or huge value within it is quoted short', { timeout: TIMEOUT }, async () => {
    const server = await serve();
    for (const field of ['task', 'agent']) {
      const deep = await raw(server, '/reset', `{"${field}": ${deepText(5000)}, "seed": 0}`);
      assert.equal(deep.status, 400, `${field}: ${JSON.stringify(deep.body)}`);
      assert.equal(deep.body.error.code, 'body_too_deep');
      assert.equal(deep.body.error.message, `the body of POST /reset nests deeper than ${MAX_BODY_DEPTH} levels (the limit on nesting)`);
    }
    const nestedTask = await post(server.url, '/reset', { task: nested(200, 'x'), seed: 0 });
    assert.equal(nestedTask.status, 400, JSON.stringify(nestedTask.body));
    assert.equal(nestedTask.body.error.field, 'task');
    assert.equal(nestedTask.body.error.message, 'task: must be a task id (a string), got a nested list');
    const hugeTask = await post(server.url, '/reset', { task: 'x'.repeat(1_000_000), seed: 0 });
    assert.equal(hugeTask.status, 400);
    assert.ok(hugeTask.body.error.message.length < 300, `the message quotes the task short: ${hugeTask.body.error.message.length} characters`);
    const hugeAgent = await post(server.url, '/reset', { task: 'assignee-email', agent: 'x'.repeat(1_000_000), seed: 0 });
    assert.equal(hugeAgent.status, 400);
    assert.equal(hugeAgent.body.error.field, 'agent');
    assert.ok(hugeAgent.body.error.message.length < 300, `the message quotes the agent short: ${hugeAgent.body.error.message.length} characters`);
    assert.equal((await post(server.url, '/reset', { task: 'assignee-email', seed: 0 })).status, 200, 'the server goes on');
  });

  it('a body over the size limit is a 413 whether or not it declares its length', { timeout: TIMEOUT }, async () => {
    const server = await serve();
    const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const outgoing = httpRequest(`${server.url}/step`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
        let text = '';
        response.on('data', (chunk) => (text += String(chunk)));
        response.once('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
      });
      outgoing.once('error', reject);
      // Chunked, with no Content-Length: the server counts what arrives.
      const chunk = 'x'.repeat(64 * 1024);
      outgoing.write('{"episode_id": "x", "message": {"content": "');
      for (let sent = 0; sent <= MAX_BODY_BYTES; sent += chunk.length) outgoing.write(chunk);
      outgoing.end('"}}');
    });
    assert.equal(answer.status, 413);
    assert.equal(answer.body.error.code, 'body_too_large');
  });
});

describe('env serve closes an episode whose step failed unforeseen', { timeout: 2 * TIMEOUT }, () => {
  it('answers a clear 500, frees its --max-episodes slot at once, tells later requests it was closed, and keeps the records already written', { timeout: TIMEOUT }, async () => {
    const out = join(temporaryDirectory('ef-hostile-env-'), 'online');
    const server = await serve({ maxEpisodes: 1, outDir: out });
    const solved = await generatedRecord(lane, 'assignee-email', 3);
    const first = await drive(server.url, { task: 'assignee-email', seed: 3 }, assistantTurns(solved));
    assert.equal(first.steps.at(-1)!.body.reward.reward, 1);
    const kept = await post(server.url, `/episodes/${first.reset.body.episode_id}/record`);
    assert.equal(kept.status, 200, JSON.stringify(kept.body));

    // No input reaches such a failure any more (the deep arguments that did are refused above), so one is injected: the
    // step is applied (the runner holds the action and waits for the next), then answering it throws, as a stack
    // overflow did.
    const original = EnvironmentEpisode.prototype.step;
    EnvironmentEpisode.prototype.step = async function (this: EnvironmentEpisode, action: Action, clientIds: readonly (string | undefined)[]) {
      const answer = await original.call(this, action, clientIds);
      if ('text' in action && action.text === 'poison') throw new RangeError('Maximum call stack size exceeded');
      return answer;
    };
    try {
      const opened = await post(server.url, '/reset', { task: 'assignee-email', seed: 4 });
      assert.equal(opened.status, 200, JSON.stringify(opened.body));
      const id = opened.body.episode_id as string;
      const turn = assistantTurns(await generatedRecord(lane, 'assignee-email', 4))[0]!;
      const failed = await post(server.url, '/step', { episode_id: id, message: { ...turn, content: 'poison' } });
      assert.equal(failed.status, 500, JSON.stringify(failed.body));
      assert.equal(failed.body.error.code, 'step_failed');
      assert.equal(failed.body.error.message, `episode ${id} was closed: its step failed (Maximum call stack size exceeded)`);
      assert.match(failed.body.error.fix, /start a new episode with \/reset/);

      const fresh = await post(server.url, '/reset', { task: 'assignee-email', seed: 5 });
      assert.equal(fresh.status, 200, `the slot is free at once: ${JSON.stringify(fresh.body)}`);
      for (const later of [
        await post(server.url, '/step', { episode_id: id, message: { role: 'assistant', content: 'Done.' } }),
        await get(server.url, `/episodes/${id}`),
        await post(server.url, `/episodes/${id}/record`),
      ]) {
        assert.equal(later.status, 404, JSON.stringify(later.body));
        assert.equal(later.body.error.code, 'episode_closed');
        assert.match(later.body.error.message, /was closed: its step failed: Maximum call stack size exceeded/);
      }
      const listed = await get(server.url, '/episodes');
      assert.deepEqual(
        listed.body.episodes.map((episode: any) => episode.episode_id),
        [first.reset.body.episode_id, fresh.body.episode_id],
      );
    } finally {
      EnvironmentEpisode.prototype.step = original;
    }
    await server.close();
    const audited = await auditDataset(out, { full: true });
    assert.deepEqual(audited.findings, []);
    assert.equal(audited.records, 1, 'the record kept before the failure is there, whole');
  });
});

describe('the Python GRPO reward function on deep completions', { timeout: 2 * TIMEOUT }, () => {
  it('scores a completion whose tool call nests 5,000 deep (as text, or as a message\'s arguments) 0.0, and still scores a solution 1.0', { timeout: TIMEOUT }, async () => {
    const server = await serve();
    const solved = await generatedRecord(lane, 'assignee-email', 3);
    const turns = assistantTurns(solved);
    const deep = deepText(5000);
    const script = `
import json, sys
sys.path.insert(0, ${JSON.stringify(join(REPO_ROOT, 'clients', 'python'))})
from episode_factory_env import make_reward_function
url, turns, deep = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
reward = make_reward_function(url)
as_text = '<tool_call>{"name": "get_issue", "arguments": ' + deep + '}</tool_call>\\nDone.'
as_message = [{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "get_issue", "arguments": deep}}]}]
print(json.dumps(reward([as_text, as_message, turns], task=["assignee-email"] * 3, seed=[3] * 3)))
`;
    const run = await runWithin(TIMEOUT / 2, 'python3', ['-I', '-B', '-c', script, server.url, JSON.stringify(turns), deep], { cwd: REPO_ROOT, env: process.env });
    assert.equal(run.timedOut, false);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.deepEqual(JSON.parse(run.stdout.trim().split('\n').at(-1)!), [0.0, 0.0, 1.0]);
    assert.match(run.stdout, /completion 0: 400 invalid_request: message\.tool_calls\[0\]\.function\.arguments: nests deeper than 128 levels/);
    assert.match(run.stdout, /completion 1: 400 invalid_request: message\.tool_calls\[0\]\.function\.arguments: nests deeper than 128 levels/);
  });
});
