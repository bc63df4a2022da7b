// Owns the `experiment` command: `experiment train-eval` trains the tiny model
// (or a Hugging Face checkpoint, --base) on a lane's verified records, serves
// it, evaluates it (and any --policy served elsewhere) on held-out seeds with
// faults on, and writes the before/after table, the comparisons and the pins
// (report.json, report.md, report.html) under --out.

import type { Command } from 'commander';
import { join } from 'node:path';
import { FactoryError } from '../core/errors.js';
import { experimentHtml, experimentMarkdown } from '../experiment/experiment-report.js';
import { ARMS, runTrainEval, type Arm } from '../experiment/train-eval.js';
import { RECIPE_NAMES, type RecipeName } from '../experiment/training-recipes.js';
import { loadLane } from '../lanes/lane-loader.js';
import { writeFileAtomically } from '../records/atomic-file.js';
import { parseSeedRange } from '../lanes/seed-range.js';
import { parsePolicySpec } from '../selection/policy-selection.js';
import { addModelServerFlags, modelServerOptions, type ModelServerFlags } from './model-server-flags.js';
import { type Streams, writeJson } from './output.js';

interface TrainEvalFlags extends ModelServerFlags {
  policy?: string[];
  trainSeeds: string;
  evalSeeds: string;
  pairSeeds?: string;
  heldoutTasks?: string;
  base: string;
  out?: string;
  recipe: string;
  arms: string;
  python?: string;
  json?: boolean;
  quiet?: boolean;
}

export function registerExperiment(program: Command, streams: Streams, setExit: (status: number) => void): void {
  const experiment = program.command('experiment').summary('experiments on what the data teaches a model').description('Experiments that train a model on the factory\'s records and measure what it learned with the same hidden checks.');
  addModelServerFlags(
    experiment
      .command('train-eval')
      .summary('train a model (the tiny one, or a checkpoint) on a lane, evaluate it on held-out seeds, compare with the base')
      .description(
        "Generates the lane's records for --train-seeds (scripted, verified) and trains a tiny qwen2 model on the completed " +
          'ones (CPU torch through the project\'s Python environment, scripts/python-loaders.sh), or, with --base <dir>, a ' +
          'Hugging Face checkpoint with TRL (converted to GGUF by llama.cpp\'s converter). Arms: base (the model ' +
          'before training), sft (all variants, faults on), sft-clean (as many records with no faults, clean variant only: the ' +
          'ablation), dpo (sft, then DPO on step-aligned pairs from every variant played side by side). Each model is served ' +
          'through the engine (llama.cpp) and plays --eval-seeds with faults on; every episode is replayed and judged. ' +
          'Writes report.json, report.md and report.html under --out: tasks completed (Wilson 95%), well-formed and exact ' +
          'calls, completion after each fault kind, and paired exact McNemar tests (sft vs base, sft vs sft-clean, dpo vs sft); ' +
          'with --heldout-tasks, the same for tasks no arm trained on; with --policy, a model served elsewhere plays too and is ' +
          'compared with base and sft. ' +
          'Every stage lands whole in its own directory: rerun the same command to resume an interrupted run.',
      )
      .argument('<lane>', 'a lane name or path')
      .requiredOption('--train-seeds <A..B>', 'seeds of the training records')
      .requiredOption('--eval-seeds <A..B>', 'held-out seeds the models are evaluated on (must not overlap the training seeds)')
      .option('--pair-seeds <A..B>', 'seeds whose every-variant episodes give the DPO pairs (default: the first quarter of --train-seeds, at most 100)')
      .option('--heldout-tasks <ids>', 'comma-separated tasks kept out of training and evaluated on their own, on the same seeds')
      .option('--base <model>', 'the model to start from: tiny (a qwen2 of the recipe\'s shape, trained from scratch here), or a Hugging Face checkpoint directory with Qwen2\'s vocabulary (Qwen2, Qwen2.5), trained with TRL (on a GPU when one is found) and converted with llama.cpp\'s convert_hf_to_gguf.py', 'tiny')
      .option('--out <dir>', 'where the run is written (default: runs/<lane>)')
      .option('--recipe <name>', `the tiny model's shape and schedule, or a checkpoint's TRL settings: ${RECIPE_NAMES.join(' or ')}`, 'standard')
      .option('--arms <list>', `comma-separated, from ${ARMS.join(', ')}`, ARMS.join(','))
      .option('--python <path>', 'the Python with torch, transformers and gguf (default: .cache/python-loaders/bin/python)')
      .option(
        '--policy <policies...>',
        'also evaluate these policies on the same held-out episodes, e.g. a model you trained elsewhere and serve with vLLM: ' +
          'openai:<model> (with --base-url) or ollama:<model>; each gets its row and is compared with base and sft (checked before anything runs)',
      ),
  )
    .option('--quiet', 'no progress lines on stderr')
    .option('--json', 'print the result (report.json) on stdout')
    .addHelpText(
      'after',
      '\nExamples:\n  episode-factory experiment train-eval tool-world-faults-v1 --train-seeds 0..399 --eval-seeds 1000..1015\n' +
        '  episode-factory experiment train-eval tool-world-faults-v1 --train-seeds 0..3 --eval-seeds 1000..1000 --recipe toy --out /tmp/toy\n' +
        '  episode-factory experiment train-eval tool-world-faults-v1 --train-seeds 0..399 --eval-seeds 1000..1039 --base ./Qwen2.5-0.5B-Instruct\n' +
        '  episode-factory experiment train-eval tool-world-faults-v1 --train-seeds 0..399 --eval-seeds 1000..1007 --policy openai:my-model --base-url http://127.0.0.1:8000/v1\n\n' +
        'Takes about an hour with the standard recipe on two CPU cores (docs/experiment.md has the measured figures).',
    )
    .action(async (laneReference: string, flags: TrainEvalFlags) => {
      if (!(RECIPE_NAMES as readonly string[]).includes(flags.recipe)) throw new FactoryError('usage', `--recipe ${flags.recipe} is not a recipe`, { fix: `use ${RECIPE_NAMES.join(' or ')}` });
      const arms = flags.arms.split(',').map((arm) => arm.trim()).filter((arm) => arm !== '');
      const unknown = arms.filter((arm) => !(ARMS as readonly string[]).includes(arm));
      if (unknown.length > 0 || arms.length === 0) throw new FactoryError('usage', `--arms: ${unknown.length > 0 ? `${unknown.join(', ')} is not an arm` : 'no arm given'}`, { fix: `choose from ${ARMS.join(', ')}` });
      const lane = loadLane(laneReference);
      const trainSeeds = parseSeedRange(flags.trainSeeds, '--train-seeds');
      const evalSeeds = parseSeedRange(flags.evalSeeds, '--eval-seeds');
      const pairSeeds = flags.pairSeeds === undefined ? undefined : parseSeedRange(flags.pairSeeds, '--pair-seeds');
      if (evalSeeds.from <= trainSeeds.to && trainSeeds.from <= evalSeeds.to) {
        throw new FactoryError('usage', `--eval-seeds ${flags.evalSeeds} overlaps --train-seeds ${flags.trainSeeds}: the evaluation would not be held out`, { fix: `pick evaluation seeds above ${trainSeeds.to}, e.g. --eval-seeds ${trainSeeds.to + 1000}..${trainSeeds.to + 1015}` });
      }
      const specs = (flags.policy ?? []).map((text) => parsePolicySpec(text));
      if (specs.some((spec) => spec.kind !== 'model')) throw new FactoryError('usage', '--policy scripted: the scripted solution is always evaluated, as the reference', { fix: 'name a served model: openai:<model> or ollama:<model>' });
      const models = specs.flatMap((spec) => (spec.kind === 'model' ? [spec.model] : []));
      const serverOptions = modelServerOptions(flags, models.length > 0 ? models : [undefined]);
      const policies = specs.map((spec) => ({ spec, options: { ...serverOptions, flag: '--policy' } }));
      const out = flags.out ?? join('runs', lane.name);
      const quiet = flags.json || flags.quiet;
      const result = await runTrainEval({
        lane,
        trainSeeds,
        evalSeeds,
        ...(pairSeeds ? { pairSeeds } : {}),
        ...(flags.heldoutTasks ? { heldoutTasks: flags.heldoutTasks.split(',').map((task) => task.trim()).filter((task) => task !== '') } : {}),
        out,
        base: flags.base,
        recipe: flags.recipe as RecipeName,
        arms: arms as Arm[],
        ...(flags.python ? { python: flags.python } : {}),
        ...(policies.length > 0 ? { policies } : {}),
        onProgress: quiet ? undefined : (message) => streams.stderr.write(`experiment: ${message}\n`),
      });
      writeFileAtomically(join(out, 'report.json'), JSON.stringify(result, null, 2) + '\n');
      const markdown = experimentMarkdown(result);
      writeFileAtomically(join(out, 'report.md'), markdown);
      writeFileAtomically(join(out, 'report.html'), experimentHtml(result));
      if (flags.json) writeJson(streams, result);
      else streams.stdout.write(`${markdown}\nwritten: ${join(out, 'report.md')}, ${join(out, 'report.html')}, ${join(out, 'report.json')}\n`);
      setExit(0);
    });
}
