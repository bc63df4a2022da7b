// `experiment train-eval` end to end at a toy size: the real generate, the
// real tokenizer (llama.cpp's, from the Qwen2 vocab), the real trainer (CPU
// torch in the project's Python environment), the real engine (llama.cpp
// behind Ollama's API) and the real judging. It proves the loop works and that
// the report's figures are the records' figures; a toy model learns nothing,
// so no gain is asserted here (docs/experiment.md has the measured run).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import type { TrainEvalResult } from '../../src/experiment/train-eval.js';
import { CHECKPOINT_RECIPES, TRAINING_RECIPES } from '../../src/experiment/training-recipes.js';
import { startEngine } from '../../src/engine/engine-server.js';
import { pythonEnvironment, REPO_ROOT, runCliWithin, temporaryDirectory, type TimedCliResult } from '../helpers.js';

// Measured about 3.5 minutes on a busy 2-core machine; the limit leaves room for a loaded CI runner.
const RUN_LIMIT_MS = 15 * 60_000;

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const records = (path: string): EpisodeRecord[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as EpisodeRecord);

// The toy run's directory: the checkpoint run below starts from its records and corpus.
const TOY_OUT = join(temporaryDirectory('ef-experiment-'), 'run');

describe('experiment train-eval (toy recipe)', () => {
  const out = TOY_OUT;
  const dir = join(out, '..');
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

  it('adds a policy served elsewhere to the same run: its row, its records, and its paired tests with base and sft', async () => {
    // The "outside" model is the sft arm's own GGUF served by a separate engine, so greedy play must match the sft arm's.
    const engine = await startEngine({ modelPath: join(out, 'models', 'sft', 'model.gguf'), name: 'outside-sft:latest', host: '127.0.0.1', port: 0, version: 'test-engine' });
    let again: TimedCliResult;
    try {
      again = await runCliWithin(RUN_LIMIT_MS, REPO_ROOT, ...args, '--python', pythonEnvironment(), '--policy', 'ollama:outside-sft:latest', '--ollama-host', engine.url);
    } finally {
      await engine.close();
    }
    assert.equal(again.status, 0, again.stderr.slice(-3000));
    assert.doesNotMatch(again.stderr, /train sft:|records train:/, 'nothing is generated or trained again');
    const withOutside = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as TrainEvalResult;
    const row = withOutside.arms.find((arm) => arm.arm === 'ollama:outside-sft:latest')!;
    assert.ok(row, `a row for the outside policy among ${withOutside.arms.map((arm) => arm.arm).join(', ')}`);
    assert.equal(row.description, 'a policy served outside the experiment');
    assert.equal(row.model, null);
    const played = records(join(out, row.records.path));
    assert.equal(played.length, 4);
    assert.equal(row.records.sha256, sha256(join(out, row.records.path)));
    assert.equal(row.figures.completed.successes, played.filter((record) => record.result.task_completed).length);
    const sft = records(join(out, result.arms.find((arm) => arm.arm === 'sft')!.records.path));
    const sftDigest = result.arms.find((arm) => arm.arm === 'sft')!.model!.digest;
    for (const record of played) {
      const policy = record.provenance.actors.find((actor) => actor.role === 'policy') as { digest?: string } | undefined;
      assert.equal(policy?.digest, sftDigest, 'the server reported the weights it played with');
      const twin = sft.find((other) => other.provenance.lineage.task === record.provenance.lineage.task && other.provenance.lineage.seed === record.provenance.lineage.seed)!;
      assert.deepEqual(record.messages, twin.messages, `${record.record_id} played as the sft arm did`);
    }
    const pairs = withOutside.comparisons.map((comparison) => `${comparison.second} vs ${comparison.first}`);
    assert.deepEqual(pairs.slice(3), ['ollama:outside-sft:latest vs base', 'ollama:outside-sft:latest vs sft']);
    assert.equal(withOutside.comparisons[4]!.difference, 0);
    assert.equal(withOutside.heldout_tasks!.arms.at(-1)!.arm, 'ollama:outside-sft:latest', 'the held-out task too');
    assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /^\| ollama:outside-sft:latest \| a policy served outside the experiment \|/m);
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

// The same loop from a real Hugging Face checkpoint: a tiny random Qwen2 with Qwen2's real tokenizer, built here
// (nothing can be downloaded), trained by TRL and converted by llama.cpp's own convert_hf_to_gguf.py. The records
// and the corpus are the toy run's above, copied: they do not depend on the base, and the stages resume from them.
describe('experiment train-eval --base <hf-dir> (toy recipe)', () => {
  const dir = temporaryDirectory('ef-experiment-checkpoint-');
  const checkpoint = join(dir, 'checkpoint');
  const out = join(dir, 'run');
  let run: TimedCliResult;
  let result: TrainEvalResult;

  before(async () => {
    const python = pythonEnvironment();
    for (const part of ['data', 'corpus', 'lanes']) cpSync(join(TOY_OUT, part), join(out, part), { recursive: true });
    execFileSync(python, [join(REPO_ROOT, 'scripts', 'experiment', 'tiny_hf_checkpoint.py'), checkpoint], { stdio: ['ignore', 'ignore', 'inherit'] });
    run = await runCliWithin(RUN_LIMIT_MS, REPO_ROOT, 'experiment', 'train-eval', 'tool-world-faults-v1', '--train-seeds', '0..3', '--eval-seeds', '1000..1000', '--heldout-tasks', 'relabel-issue', '--recipe', 'toy', '--arms', 'base,sft,dpo', '--base', checkpoint, '--out', out, '--python', python);
    assert.equal(run.status, 0, `exit ${run.status}; stderr ends:\n${run.stderr.slice(-3000)}`);
    result = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as TrainEvalResult;
  });

  it('trains the checkpoint with TRL, converts each arm to a GGUF, and evaluates each through the engine', () => {
    assert.doesNotMatch(run.stderr, /records train:/, "the copied records were reused, not generated again");
    assert.equal(typeof result.base, 'object');
    const base = result.base as { dir: string; sha256: string };
    assert.equal(base.dir, checkpoint);
    assert.match(base.sha256, /^[0-9a-f]{64}$/);
    assert.ok(readFileSync(join(out, 'report.md'), 'utf8').includes(`- base: ${checkpoint} · sha256 ${base.sha256}`), 'the report pins the checkpoint');
    assert.deepEqual(result.arms.map((arm) => arm.arm), ['base', 'sft', 'dpo']);
    assert.equal(result.arms[0]!.description, 'the checkpoint before training, as given');
    for (const arm of result.arms) {
      assert.equal(arm.model!.digest, sha256(join(out, arm.model!.gguf)), `${arm.arm}: the pinned digest is the GGUF's`);
      assert.equal(readFileSync(join(out, arm.model!.gguf)).subarray(0, 4).toString('latin1'), 'GGUF');
      const played = records(join(out, arm.records.path));
      assert.equal(played.length, 4);
      for (const record of played) {
        const policy = record.provenance.actors.find((actor) => actor.role === 'policy') as { digest?: string } | undefined;
        assert.equal(policy?.digest, arm.model!.digest, `${record.record_id} pins the weights that played it`);
        assert.equal(record.result.verified_by, 'replay');
      }
      assert.equal(arm.figures.completed.successes, played.filter((record) => record.result.task_completed).length);
    }
    assert.equal(new Set(result.arms.map((arm) => arm.model!.digest)).size, 3, 'three arms, three different models');
    const toy = CHECKPOINT_RECIPES.toy;
    assert.deepEqual(result.curves.sft!.map((point) => point.phase), Array(toy.sft.steps).fill('sft'));
    assert.deepEqual(result.curves.dpo!.map((point) => point.phase), Array(toy.dpo.steps).fill('dpo'));
    assert.ok(result.curves.sft!.every((point) => Number.isFinite(point.loss)));
    assert.ok(existsSync(join(out, 'models', 'sft', 'hf', 'config.json')), 'the trained checkpoint is kept beside its GGUF');
    assert.equal((result.arms[2]!.training as { preferences: { pairs: number } }).preferences.pairs, result.corpus.preference_pairs);
    assert.ok(Number.isFinite((result.arms[1]!.training as { heldout_loss: number }).heldout_loss));
  });

  it('refuses a directory that is not a checkpoint, naming what is missing', async () => {
    const refused = await runCliWithin(RUN_LIMIT_MS, REPO_ROOT, 'experiment', 'train-eval', 'tool-world-faults-v1', '--train-seeds', '0..3', '--eval-seeds', '1000..1000', '--base', dir, '--out', join(dir, 'refused'));
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--base .*: no config\.json there.*fix: pass a Hugging Face checkpoint directory/s);
  });
});
