// clients/python/trl_environment.py, TRL's environment_factory over `env
// serve`, driven as GRPOTrainer drives it (tests/python/trl_environment_check.py):
// its methods are the server's tools, rendered by transformers' own
// get_json_schema; reset(**row) takes a dataset row; a task's solution made
// of method calls scores 1.0 through the reward function, a wrong answer 0.0;
// and the episodes it kept are records that replay and audit.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { replayDataset } from '../../src/dataset-replay/replay-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { recordedActions } from '../../src/verify/replay-policy.js';
import { environmentServers, generatedRecord } from '../environment-client.js';
import { pythonEnvironment, REPO_ROOT, temporaryDirectory, withoutVariable } from '../helpers.js';

withoutVariable('SOURCE_DATE_EPOCH');

const serve = environmentServers();

const toolWorld = loadLane('tool-world-v1', REPO_ROOT);

describe('TRL environment_factory over env serve', () => {
  it('offers one typed, documented method per tool; plays solutions call by call to reward 1.0 and a wrong answer to 0.0; kept records replay and audit', async () => {
    const out = join(temporaryDirectory(), 'grpo');
    const server = await serve(toolWorld, { outDir: out });
    const plays = [];
    const tasks = ['assignee-email', 'close-named-issue', 'relabel-issue'];
    for (const task of tasks) {
      const generated = await generatedRecord(toolWorld, task, 6);
      const actions = recordedActions(generated.messages);
      const calls = actions.flatMap((action) =>
        action.kind === 'tool_call' ? [[action.name, action.arguments]] : action.kind === 'tool_calls' ? action.calls.map((call) => [call.name, call.arguments]) : [],
      );
      const answer = actions.at(-1)!;
      assert.equal(answer.kind, 'final_text');
      plays.push({ row: { prompt: [{ role: 'user', content: 'ignored' }], task, seed: 6 }, calls, answer: (answer as { text: string }).text, solved: generated.result.task_completed });
    }
    // A row with only a seed (the task derived from it) and a wrong answer.
    plays.push({ row: { prompt: [], seed: 1 }, calls: [['search_issues', { query: 'sync', limit: 3 }]], answer: 'Nothing to report.', solved: false });
    // The first row again, answered wrong: the second rollout of its GRPO group, kept beside the first.
    plays.push({ row: plays[0]!.row, calls: [], answer: 'No idea.', solved: false });
    const file = join(temporaryDirectory(), 'plays.json');
    writeFileSync(file, JSON.stringify({ agent: 'grpo-check', plays }));
    const run = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
      execFile(pythonEnvironment(), [join(REPO_ROOT, 'tests/python/trl_environment_check.py'), server.url, file], { timeout: 180_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
        resolve({ status: error ? 1 : 0, stdout, stderr }),
      ),
    );
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout);

    const catalog = generatedRecordTools(await generatedRecord(toolWorld, 'assignee-email', 0));
    assert.deepEqual(report.schemas.map((schema: any) => schema.function.name).sort(), catalog.map((tool) => tool.name).sort());
    for (const schema of report.schemas) {
      const tool = catalog.find((candidate) => candidate.name === schema.function.name)!;
      const expected = JSON.parse(tool.input_schema);
      assert.deepEqual(new Set(schema.function.parameters.required ?? []), new Set(expected.required ?? []), tool.name);
      assert.deepEqual(Object.keys(schema.function.parameters.properties).sort(), Object.keys(expected.properties).sort(), tool.name);
      for (const [key, property] of Object.entries<any>(expected.properties)) {
        if (typeof property.type === 'string' && property.type !== 'null') assert.equal(schema.function.parameters.properties[key].type, property.type, `${tool.name}.${key}`);
        if (Array.isArray(property.enum)) assert.deepEqual(schema.function.parameters.properties[key].enum, property.enum, `${tool.name}.${key}`);
      }
    }
    assert.deepEqual(report.scores, plays.map((play) => (play.solved ? 1 : 0)));
    assert.deepEqual(report.scores.slice(0, 3), [1, 1, 1]);
    assert.ok(report.answers[0].every((answer: unknown) => typeof answer === 'string' && answer.length > 0), 'each method returns the text the agent sees');

    const replayed = await replayDataset(out);
    assert.deepEqual([replayed.records, replayed.verified, replayed.failed], [plays.length, plays.length, 0], JSON.stringify(replayed.failures));
    assert.deepEqual((await auditDataset(out, { full: true })).findings, []);
    const ids = readFileSync(join(out, 'episodes.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line).record_id);
    assert.deepEqual(
      ids.filter((id) => id.includes('assignee-email.s6')),
      ['tool-world-v1.assignee-email.s6.remote-grpo-check.r0', 'tool-world-v1.assignee-email.s6.remote-grpo-check.r1'],
      'each reset of a (task, seed) is the next rollout of its group',
    );
    assert.deepEqual(report.rerun, { score: 0, kept: ids[0] }, 'a rerun under the same agent name is scored, and the record --out holds already is named');
    assert.equal(ids.length, plays.length, 'and nothing was kept twice');
  });
});

function generatedRecordTools(record: { tools: { name: string; input_schema: string }[] }) {
  return record.tools;
}
