// Proof by training: what the CLI exports trains a model. The command line a
// user runs (generate, export sft/dpo --arguments object, card) writes a
// dataset directory; examples/train/train_tiny.py loads it with Hugging Face
// datasets, trains a tokenizer and a tiny randomly initialised model on it
// with TRL's SFTTrainer (assistant-only loss) and then DPOTrainer, and reports
// the losses. examples/train/template_conventions.py renders one exported row
// with TRL's packaged chat templates to show which argument form each wants.
// The Python side is built by scripts/python-loaders.sh (which .ci/run calls);
// this test builds it too if it is missing, so it never silently skips.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { pythonEnvironment, REPO_ROOT, runCliWithin, runWithin, temporaryDirectory, type TimedCliResult } from '../helpers.js';

const TRAIN_SCRIPT = join(REPO_ROOT, 'examples', 'train', 'train_tiny.py');
const CONVENTIONS_SCRIPT = join(REPO_ROOT, 'examples', 'train', 'template_conventions.py');
// The whole example measured 35-50 s on a 2-core machine; the limits leave room for a loaded CI runner.
const TRAIN_LIMIT_MS = 8 * 60_000;
const CLI_LIMIT_MS = 3 * 60_000;

type Run = TimedCliResult;

/** Runs a Python script with a hard limit: past `limitMs` the child gets SIGKILL, so a hang fails the test instead of the suite. */
function runPython(executable: string, args: string[], limitMs: number, home: string): Promise<Run> {
  const env = { ...process.env, HF_HOME: home, HF_HUB_OFFLINE: '1', HF_DATASETS_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' };
  return runWithin(limitMs, executable, args, { cwd: REPO_ROOT, env });
}

function describeRun(what: string, run: Run): string {
  return `${what}: exit ${run.status}${run.timedOut ? ' (killed at the time limit)' : ''} after ${run.seconds.toFixed(1)} s; stderr ends:\n${run.stderr.slice(-3000)}`;
}

interface Phase {
  steps: number;
  loss_first: number;
  loss_last: number;
  losses: number[];
  first_window_mean: number;
  last_window_mean: number;
  relative_drop: number;
  finite: boolean;
  fell: boolean;
  examples: number;
  assistant_only_loss: boolean;
  tokens: number;
  seconds: number;
}

interface TrainingReport {
  ok: boolean;
  sft: Phase & { loss_tokens: number; chat_template: string };
  dpo: Phase & { reward_accuracy_last: number | null };
  tokenizer: { vocab_size: number };
  model: { parameters: number };
  seconds: Record<string, number>;
  versions: Record<string, string>;
}

type Outcome = string;
interface ConventionsReport {
  record_id: string;
  results: Record<string, Record<'object' | 'string', Outcome>>;
  needs: Record<string, string>;
  null_keys: number;
}

describe('proof by training: a tiny model learns from what the CLI exports', () => {
  // Made here, not in the hook: the directory's clean-up then runs after the suite, not after the hook.
  const work = temporaryDirectory('ef-train-');
  const home = join(work, '.hf-home');
  const dataset = join(work, 'dataset');
  let executable = '';

  before(async () => {
    executable = pythonEnvironment();
    const steps: string[][] = [
      ['generate', 'tool-world-dpo-v1', '--seeds', '0..2', '--out', dataset, '--quiet'],
      ['export', 'sft', dataset, '--arguments', 'object'],
      ['export', 'dpo', dataset, '--arguments', 'object'],
      ['card', dataset],
    ];
    for (const args of steps) {
      const result = await runCliWithin(CLI_LIMIT_MS, work, ...args);
      assert.equal(result.status, 0, `episode-factory ${args.join(' ')}: exit ${result.status}${result.timedOut ? ' (killed)' : ''}\n${result.stderr}`);
    }
    for (const file of ['README.md', join('sft', 'train.jsonl'), join('dpo', 'train.jsonl')]) {
      assert.ok(existsSync(join(dataset, file)), `the CLI wrote ${file}`);
    }
  });

  it(
    'SFT with assistant-only loss, then DPO from it against a frozen reference: every loss finite, both fall',
    { timeout: TRAIN_LIMIT_MS + 60_000 },
    async () => {
      const run = await runPython(executable, [TRAIN_SCRIPT, dataset, '--json'], TRAIN_LIMIT_MS, home);
      assert.equal(run.status, 0, describeRun('train_tiny.py', run));
      const report = JSON.parse(run.stdout) as TrainingReport;
      assert.equal(report.ok, true);

      assert.equal(report.sft.steps, 30);
      assert.equal(report.sft.losses.length, 30);
      assert.equal(report.sft.assistant_only_loss, true, 'SFT trained on the assistant turns only');
      assert.match(report.sft.chat_template, /qwen2_5_training/, "TRL swapped in its Qwen2.5 training template ({% generation %} markers)");
      assert.ok(report.sft.loss_tokens > 0 && report.sft.loss_tokens < report.sft.tokens, 'some but not all tokens carry loss');
      assert.ok(report.sft.examples > 0);

      assert.equal(report.dpo.steps, 20);
      assert.equal(report.dpo.losses.length, 20);
      assert.equal(report.dpo.assistant_only_loss, false);
      assert.ok(report.dpo.examples > 0);
      // The policy starts equal to its reference, so the first DPO loss is ln 2.
      assert.ok(Math.abs(report.dpo.loss_first - Math.log(2)) < 1e-3, `first DPO loss ${report.dpo.loss_first} is ln 2`);

      for (const [name, phase] of [['sft', report.sft], ['dpo', report.dpo]] as const) {
        assert.ok(phase.losses.every(Number.isFinite) && phase.finite, `${name}: every loss is finite`);
        assert.ok(phase.last_window_mean < phase.first_window_mean, `${name}: loss fell (${phase.first_window_mean} -> ${phase.last_window_mean})`);
        assert.ok(phase.relative_drop >= 0.1, `${name}: loss fell by at least 10% (${(phase.relative_drop * 100).toFixed(1)}%)`);
        assert.equal(phase.fell, true);
      }
      assert.ok(report.tokenizer.vocab_size > 256);
      assert.ok(report.model.parameters > 0);
      for (const library of ['trl', 'transformers', 'torch', 'datasets']) assert.ok(report.versions[library], `${library} version reported`);
    },
  );

  it(
    'chat templates disagree on the argument form: Qwen2.5 and Llama 3.1 want objects, DeepSeek-V3 wants strings',
    { timeout: 5 * 60_000 },
    async () => {
      const run = await runPython(executable, [CONVENTIONS_SCRIPT, dataset], 4 * 60_000, home);
      assert.equal(run.status, 0, describeRun('template_conventions.py', run));
      const report = JSON.parse(run.stdout) as ConventionsReport;
      const results = report.results;

      // The rows as loaded carry no null keys (each message is a Json value), so only the argument form decides.
      assert.equal(report.null_keys, 0, 'no message comes back with a null key a template would test for');
      assert.deepEqual(report.needs, { qwen2_5: 'object', llama3_1: 'object', deepseekv3: 'string' });
      assert.equal(results.qwen2_5?.object, 'single');
      assert.equal(results.qwen2_5?.string, 'double', 'Qwen2.5 renders a string argument as a JSON string of JSON');
      assert.equal(results.llama3_1?.object, 'single');
      assert.equal(results.llama3_1?.string, 'double', 'Llama 3.1 renders a string argument as a JSON string of JSON');
      assert.equal(results.deepseekv3?.string, 'single');
      assert.match(results.deepseekv3?.object ?? '', /^error: /, 'DeepSeek-V3 concatenates the arguments as a string, so an object errors');
    },
  );
});
