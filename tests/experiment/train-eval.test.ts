// `experiment train-eval` end to end at a toy size: the real generate, the
// real tokenizer (llama.cpp's, from the Qwen2 vocab), the real trainer (CPU
// torch in the project's Python environment), the real engine (llama.cpp
// behind Ollama's API) and the real judging. It proves the loop works and that
// the report's figures are the records' figures; a toy model learns nothing,
// so no gain is asserted here (docs/experiment.md has the measured run).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import type { TrainEvalResult } from '../../src/experiment/train-eval.js';
import { TRAINING_RECIPES } from '../../src/experiment/training-recipes.js';
import { pythonEnvironment, REPO_ROOT, runCliWithin, temporaryDirectory, type TimedCliResult } from '../helpers.js';

// Measured about 3.5 minutes on a busy 2-core machine; the limit leaves room for a loaded CI runner.
const RUN_LIMIT_MS = 15 * 60_000;

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const records = (path: string): EpisodeRecord[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as EpisodeRecord);

describe('experiment train-eval (toy recipe)', () => {
  const dir = temporaryDirectory('ef-experiment-');
  const out = join(dir, 'run');
  const args = ['experiment', 'train-eval', 'tool-world-faults-v1', '--train-seeds', '0..3', '--eval-seeds', '1000..1000', '--heldout-tasks', 'relabel-issue', '--recipe', 'toy', '--out', out];
  let first: TimedCliResult;
  let result: TrainEvalResult;

  before(async () => {
    const python = pythonEnvironment();
    first = await runCliWithin(RUN_LIMIT_MS, REPO_ROOT, ...args, '--python', python);
    assert.equal(first.status, 0, `experiment train-eval: exit ${first.status}; stderr ends:\n${first.stderr.slice(-3000)}`);
    result = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as TrainEvalResult;
  });

  it('trains every arm, evaluates each on the held-out seed, and prints the before/after table', () => {
    assert.deepEqual(result.arms.map((arm) => arm.arm), ['base', 'sft', 'sft-clean', 'dpo']);
    assert.match(first.stdout, /\| policy \|/);
    assert.match(first.stdout, /^\| sft \| SFT on the lane's completed records/m);
    assert.match(first.stderr, /experiment: train sft: step 8\/8 \(prefix\)/, 'progress names each training step');
    for (const arm of result.arms) {
      assert.equal(arm.figures.episodes, 4, `${arm.arm}: one seed of the four tasks trained on`);
      const played = records(join(out, arm.records.path));
      assert.ok(played.every((record) => record.provenance.lineage.seed === 1000 && record.result.verified_by === 'replay'));
    }
  });

  it('keeps a held-out task out of every training set and evaluates it on its own', () => {
    for (const name of ['train', 'train-clean', 'pairs']) {
      const tasks = new Set(records(join(out, result.data[name]!.path)).map((record) => record.task.id));
      assert.equal(tasks.size, 4, `${name}: four tasks`);
      assert.ok(!tasks.has('relabel-issue'), `${name} has no relabel-issue record`);
    }
    assert.deepEqual([...result.train_tasks].sort(), ['assignee-email', 'close-named-issue', 'comment-on-issue', 'find-open-bugs']);
    const heldout = result.heldout_tasks!;
    assert.deepEqual(heldout.tasks, ['relabel-issue']);
    for (const entry of [heldout.scripted, ...heldout.arms]) {
      const played = records(join(out, entry.records.path));
      assert.deepEqual(played.map((record) => record.task.id), ['relabel-issue'], `${entry.arm} played the held-out task`);
      assert.equal(entry.figures.completed.successes, played.filter((record) => record.result.task_completed).length);
    }
    assert.deepEqual(heldout.comparisons.map((comparison) => comparison.episodes), [1, 1, 1]);
  });

  it("reports figures that are the evaluation records' own", () => {
    for (const entry of [result.scripted, ...result.arms]) {
      const path = join(out, entry.records.path);
      assert.equal(entry.records.sha256, sha256(path), `${entry.arm}: the pinned hash is the file's`);
      const played = records(path);
      assert.equal(entry.figures.completed.successes, played.filter((record) => record.result.task_completed).length, `${entry.arm}: completed`);
      assert.equal(entry.figures.completed.n, played.length);
      const firedKinds = new Set(played.flatMap((record) => record.recovery.faults_fired.map((fault) => fault.kind)));
      assert.deepEqual(Object.keys(entry.figures.recovery).sort(), [...firedKinds].sort(), `${entry.arm}: one recovery rate per fault kind that fired`);
    }
    // The scripted solution makes every call it meant: its exact calls are all its calls but the deliberate mistakes.
    const scripted = records(join(out, result.scripted.records.path));
    const rejectedKinds = new Map<string, string>();
    for (const record of scripted) for (const message of record.messages) if (message.role === 'tool' && message.tool_call_id) rejectedKinds.set(`${record.record_id}/${message.tool_call_id}`, message.tool_result.kind ?? 'ok');
    let calls = 0;
    let meant = 0;
    for (const record of scripted) {
      for (const message of record.messages) {
        if (message.role !== 'assistant') continue;
        for (const call of message.tool_calls ?? []) {
          calls++;
          if (rejectedKinds.get(`${record.record_id}/${call.id}`) !== 'invalid_arguments') meant++;
        }
      }
    }
    assert.equal(result.scripted.figures.calls, calls);
    assert.equal(result.scripted.figures.exact.successes, meant);
  });

  it('pins each model by its digest, and each evaluation record names that digest', () => {
    for (const arm of result.arms) {
      assert.ok(arm.model, `${arm.arm} has a model`);
      assert.equal(arm.model.digest, sha256(join(out, arm.model.gguf)));
      for (const record of records(join(out, arm.records.path))) {
        const policy = record.provenance.actors.find((actor) => actor.role === 'policy') as { digest?: string } | undefined;
        assert.equal(policy?.digest, arm.model.digest, `${record.record_id} pins the weights that played it`);
      }
    }
    assert.equal(new Set(result.arms.map((arm) => arm.model!.digest)).size, 4, 'four arms, four different models');
  });

  it('trains both SFT arms on the same number of records, and DPO on step-aligned pairs on top of SFT', () => {
    const completed = (name: string) => result.data[name]!.completed;
    assert.equal(result.corpus.sft_records, Math.min(completed('train'), completed('train-clean')));
    assert.equal(result.corpus.clean_records, result.corpus.sft_records);
    assert.ok(result.corpus.preference_pairs! > 0, 'the DPO seed gives pairs');
    const toy = TRAINING_RECIPES.toy.train;
    const phases = (arm: string) => result.curves[arm]!.map((point) => point.phase);
    assert.equal(result.curves.sft!.length, toy.recall!.steps + toy.windows!.steps + toy.steps);
    assert.deepEqual([...new Set(phases('sft'))], ['recall', 'windows', 'windows+prefix', 'tails', 'prefix']);
    assert.deepEqual(phases('dpo'), Array(toy.dpo!.steps).fill('dpo'));
    assert.equal(result.curves.base, undefined, 'the base takes no step');
    assert.equal((result.arms.find((arm) => arm.arm === 'dpo')!.training as { preferences: { pairs: number } }).preferences.pairs, result.corpus.preference_pairs);
  });

  it('compares sft with base, with sft-clean, and dpo with sft, over the same episodes', () => {
    assert.deepEqual(result.comparisons.map((comparison) => `${comparison.second} vs ${comparison.first}`), ['sft vs base', 'sft vs sft-clean', 'dpo vs sft']);
    for (const comparison of result.comparisons) {
      assert.equal(comparison.episodes, 4);
      const { first_only: firstOnly, second_only: secondOnly } = comparison.mcnemar;
      assert.equal(comparison.difference, (secondOnly - firstOnly) / 4);
    }
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    assert.match(html, /<polyline/);
    assert.equal(readFileSync(join(out, 'report.md'), 'utf8'), first.stdout.slice(0, first.stdout.indexOf('\nwritten: ')));
  });

  it('resumes: the same command again reuses every stage and writes the same report', async () => {
    const before = readFileSync(join(out, 'report.json'));
    const modelTime = statSync(join(out, 'models', 'sft', 'model.gguf')).mtimeMs;
    const again = await runCliWithin(RUN_LIMIT_MS, REPO_ROOT, ...args, '--python', pythonEnvironment());
    assert.equal(again.status, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /train sft:/, 'nothing is trained again');
    assert.equal(statSync(join(out, 'models', 'sft', 'model.gguf')).mtimeMs, modelTime);
    assert.ok(readFileSync(join(out, 'report.json')).equals(before), 'the same report, byte for byte');
  });

  it('refuses another experiment in the same directory, and evaluation seeds that were trained on', async () => {
    const other = await runCliWithin(RUN_LIMIT_MS, REPO_ROOT, ...args.slice(0, -2), '--out', out, '--eval-seeds', '1001..1001');
    assert.equal(other.status, 2);
    assert.match(other.stderr, /holds another experiment \(it differs in eval_seeds\).*fix: pass a new --out/);
    const overlap = await runCliWithin(RUN_LIMIT_MS, REPO_ROOT, 'experiment', 'train-eval', 'tool-world-faults-v1', '--train-seeds', '0..9', '--eval-seeds', '5..6', '--out', join(dir, 'overlap'));
    assert.equal(overlap.status, 2);
    assert.match(overlap.stderr, /--eval-seeds 5\.\.6 overlaps --train-seeds 0\.\.9/);
  });

  it('leaves its records replayable from the run directory (the derived lanes are written beside them)', async () => {
    const replay = await runCliWithin(RUN_LIMIT_MS, out, 'replay', join('eval', 'sft'));
    assert.equal(replay.status, 0, replay.stderr);
    assert.match(replay.stdout, /4 records, 4 verified, 0 failed/);
  });
});
