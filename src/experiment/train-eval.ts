// Owns `experiment train-eval`: the loop that shows whether a model trained on
// the factory's records does the tasks better. From one lane it generates the
// training records (and, for the ablation, the same tasks with no faults and
// only the clean variant; for DPO, every variant side by side), tokenizes the
// completed ones, trains each arm (the tiny model from scratch, or a Hugging
// Face checkpoint with TRL), serves each model through the engine, plays the
// held-out seeds with faults on (every episode replayed and judged), beside
// any policy served elsewhere, and writes the figures, the paired comparisons
// and the pins. Every stage lands in its own directory under --out, written
// whole or not at all, so a run stopped anywhere resumes where it stopped; the
// run's identity (lane, seeds, base, recipe, arms) is kept in experiment.json,
// and a rerun into the same --out with different inputs is refused.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { canonicalJson } from '../core/canonical-json.js';
import { FactoryError } from '../core/errors.js';
import { hashCanonical } from '../core/hashing.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import type { Lane, SeedRange } from '../lanes/lane.js';
import { writeFileAtomically } from '../records/atomic-file.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { hashFile } from '../records/manifest.js';
import type { EpisodeProgress } from '../generation/generate-dataset.js';
import { deriveLane } from './experiment-lanes.js';
import { comparePolicies, episodeKey, policyFigures, type PairedComparison, type PolicyFigures } from './evaluation-metrics.js';
import { preparePolicy, type ModelOptions, type PolicySpec, type PreparedPolicy } from '../selection/policy-selection.js';
import { evaluatePolicy } from './policy-evaluation.js';
import { completedRecords, preferencePairs, readEpisodes, sftLines } from './training-data.js';
import { readCheckpoint, trainCheckpoint, type Checkpoint, type CheckpointRecipe } from './checkpoint-training.js';
import { tinyVocab, trainTinyModel, type TinyRecipe } from './tiny-training.js';
import { readTrainingRun, type TrainingRun } from './training-run.js';
import { openVocabTokenizer } from './vocab-tokenizer.js';
import { CHECKPOINT_RECIPES, TRAINING_RECIPES, type RecipeName } from './training-recipes.js';

/** What each arm is: the base before training, SFT on the lane's records, SFT on clean records only, DPO on top of SFT. */
export const ARMS = ['base', 'sft', 'sft-clean', 'dpo'] as const;
export type Arm = (typeof ARMS)[number];

export const ARM_DESCRIPTIONS: Record<Arm, string> = {
  base: 'the model before training (its initial weights)',
  sft: "SFT on the lane's completed records: every variant, faults on",
  'sft-clean': 'SFT on as many completed records with no faults, clean variant only',
  dpo: 'the SFT model, then DPO on step-aligned pairs',
};

/** An arm's description; from a checkpoint, the base is that checkpoint as given. */
export function armDescription(arm: Arm, checkpoint: Checkpoint | null): string {
  return arm === 'base' && checkpoint ? 'the checkpoint before training, as given' : ARM_DESCRIPTIONS[arm];
}

export interface TrainEvalOptions {
  lane: Lane;
  trainSeeds: SeedRange;
  evalSeeds: SeedRange;
  /** The seeds whose every-variant episodes give the DPO pairs (default: the first quarter of the training seeds, at most 100). */
  pairSeeds?: SeedRange;
  /** Tasks kept out of training and evaluated on their own (default: none). */
  heldoutTasks?: string[];
  out: string;
  /** The model the arms start from: `tiny` (trained from scratch here, the default) or a Hugging Face checkpoint directory. */
  base?: string;
  recipe: RecipeName;
  arms: readonly Arm[];
  python?: string;
  /**
   * Policies served elsewhere (a model trained outside the experiment): each is checked against the evaluation lane
   * (greedy, as the arms play) before any record is made, plays the same held-out episodes, gets its row, and is
   * compared with base and sft. They are not part of the run's identity: a rerun may add one.
   */
  policies?: { spec: PolicySpec; options: ModelOptions }[];
  onProgress?: (message: string) => void;
}

export interface ArmResult {
  /** An arm, or the label of a policy served elsewhere (`openai:<model>`). */
  arm: Arm | string;
  description: string;
  model: { gguf: string; digest: string } | null;
  training: Record<string, unknown> | null;
  figures: PolicyFigures;
  records: { path: string; sha256: string };
}

/** One evaluation: the scripted reference and each arm on the same episodes, and the paired comparisons. */
export interface EvaluationResult {
  tasks: string[];
  scripted: ArmResult;
  arms: ArmResult[];
  comparisons: PairedComparison[];
}

export interface TrainEvalResult {
  format: 'episode-factory.experiment.v1';
  lane: { name: string; sha256: string };
  /** The tasks trained on (the held-out tasks left out). */
  train_tasks: string[];
  train_seeds: string;
  eval_seeds: string;
  pair_seeds: string | null;
  /** What the arms started from: the tiny model, or the checkpoint directory and its content's sha256. */
  base: 'tiny' | Checkpoint;
  recipe: { name: RecipeName; sha256: string; config: TinyRecipe | CheckpointRecipe };
  factory_version: string;
  data: Record<string, { path: string; records: number; completed: number; sha256: string }>;
  corpus: { sft_records: number; sft_lines: number; clean_records: number | null; preference_pairs: number | null; pairs_by_rejected_variant: Record<string, number> | null };
  scripted: ArmResult;
  arms: ArmResult[];
  comparisons: PairedComparison[];
  /** The same arms on tasks none of them trained on, when --heldout-tasks names some. */
  heldout_tasks: EvaluationResult | null;
  curves: Record<string, TrainingRun['curve']>;
}

/** The trainer's stats without its wall time: the report is the same bytes for the same inputs. */
function reportedStats(stats: Record<string, unknown>): Record<string, unknown> {
  const { train_seconds: _seconds, ...rest } = stats;
  return rest;
}

/** A recipe's schedule with no supervised step: the base as initialised, or DPO alone on top of a trained state. */
const NO_STEPS = { steps: 0, steps_without_prefix: 0, recall: { steps: 0, batch: 1, length: 1 }, windows: { steps: 0, batch: 1, width: 1 }, heldout_every: 0 };

const range = (seeds: SeedRange) => `${seeds.from}..${seeds.to}`;

/** A policy label as a directory name: `openai:Qwen/Qwen2.5-7B` → `openai-Qwen-Qwen2.5-7B`. */
const policyDirectory = (label: string) => label.replace(/[^A-Za-z0-9._-]+/g, '-');

const fileSha256 = async (path: string) => (await hashFile(path)).sha256;

/** The run's identity: a rerun into the same --out must match it, or it would mix two experiments' files. */
function claimRun(options: TrainEvalOptions, base: TrainEvalResult['base'], recipe: TinyRecipe | CheckpointRecipe, pairSeeds: SeedRange | null): void {
  const identity = {
    base,
    lane: options.lane.name,
    lane_sha256: options.lane.sha256,
    train_seeds: range(options.trainSeeds),
    eval_seeds: range(options.evalSeeds),
    pair_seeds: pairSeeds ? range(pairSeeds) : null,
    heldout_tasks: [...(options.heldoutTasks ?? [])],
    recipe: options.recipe,
    recipe_sha256: hashCanonical(recipe),
    arms: [...options.arms],
    factory_version: FACTORY_VERSION,
  };
  const path = join(options.out, 'experiment.json');
  if (existsSync(path)) {
    const before = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    // A run written before --base existed started from the tiny model.
    const earlier: Record<string, unknown> = { base: 'tiny', ...before };
    const differs = Object.keys(identity).filter((key) => canonicalJson(earlier[key]) !== canonicalJson(identity[key as keyof typeof identity]));
    if (differs.length > 0) {
      throw new FactoryError('usage', `${options.out} holds another experiment (it differs in ${differs.join(', ')})`, {
        fix: 'pass a new --out, or delete that directory to start again',
      });
    }
    return;
  }
  mkdirSync(options.out, { recursive: true });
  writeFileAtomically(path, JSON.stringify(identity, null, 2) + '\n');
}

function defaultPairSeeds(trainSeeds: SeedRange): SeedRange {
  const count = trainSeeds.to - trainSeeds.from + 1;
  return { from: trainSeeds.from, to: trainSeeds.from + Math.max(1, Math.min(100, Math.ceil(count / 4))) - 1 };
}

export async function runTrainEval(options: TrainEvalOptions): Promise<TrainEvalResult> {
  const out = resolve(options.out);
  const say = options.onProgress ?? (() => {});
  const checkpoint = options.base === undefined || options.base === 'tiny' ? null : await readCheckpoint(options.base);
  const recipe = checkpoint ? CHECKPOINT_RECIPES[options.recipe] : TRAINING_RECIPES[options.recipe];
  const arms = ARMS.filter((arm) => options.arms.includes(arm));
  if (arms.includes('dpo') && !arms.includes('sft')) throw new FactoryError('usage', '--arms dpo trains on top of sft', { fix: 'add sft to --arms' });
  const pairSeeds = arms.includes('dpo') ? (options.pairSeeds ?? defaultPairSeeds(options.trainSeeds)) : null;
  const laneTasks = options.lane.document.tasks.map((task) => task.id);
  const heldoutTasks = [...(options.heldoutTasks ?? [])];
  const unknownTasks = heldoutTasks.filter((task) => !laneTasks.includes(task));
  if (unknownTasks.length > 0) throw new FactoryError('usage', `--heldout-tasks: ${unknownTasks.join(', ')} is not a task of ${options.lane.name}`, { fix: `choose from ${laneTasks.join(', ')}` });
  const trainTasks = laneTasks.filter((task) => !heldoutTasks.includes(task));
  if (trainTasks.length === 0) throw new FactoryError('usage', `--heldout-tasks holds out every task of ${options.lane.name}: nothing is left to train on`, { fix: 'hold out fewer tasks' });
  claimRun({ ...options, out }, checkpoint ?? 'tiny', recipe, pairSeeds);
  await tinyVocab();

  const lanesDir = join(out, 'lanes');
  const evalLane = deriveLane(options.lane, 'eval', lanesDir);
  // Outside models are checked now, with the evaluation's decoding: if a server or a model is missing, no stage runs.
  const outside: PreparedPolicy[] = [];
  for (const { spec, options: modelOptions } of options.policies ?? []) outside.push(await preparePolicy(evalLane, spec, modelOptions));
  const progress = (stage: string) => (episode: EpisodeProgress) => {
    if (episode.done === episode.total || episode.done % 50 === 0) say(`${stage}: ${episode.done}/${episode.total} episodes`);
  };

  // 1. Records: scripted, verified.
  const data: TrainEvalResult['data'] = {};
  const generateInto = async (name: string, lane: Lane, seeds: SeedRange, tasks: string[]): Promise<EpisodeRecord[]> => {
    const dir = join(out, 'data', name);
    const done = join(dir, 'experiment-stage.json');
    if (!existsSync(done)) {
      say(`records ${name}: ${lane.name} seeds ${range(seeds)}`);
      await evaluatePolicy({ lane, seeds, tasks, dir, onEpisode: progress(`records ${name}`) });
      writeFileAtomically(done, JSON.stringify({ stage: `records ${name}` }) + '\n');
    }
    const path = join(dir, 'episodes.jsonl');
    const records = readEpisodes(path);
    data[name] = { path: relative(out, path), records: records.length, completed: records.filter((record) => record.result.task_completed).length, sha256: await fileSha256(path) };
    return records;
  };
  const train = await generateInto('train', options.lane, options.trainSeeds, trainTasks);
  const clean = arms.includes('sft-clean') ? await generateInto('train-clean', deriveLane(options.lane, 'clean', lanesDir), options.trainSeeds, trainTasks) : null;
  const pairs = pairSeeds ? await generateInto('pairs', deriveLane(options.lane, 'each', lanesDir), pairSeeds, trainTasks) : null;
  const reference = await generateInto('eval-scripted', evalLane, options.evalSeeds, trainTasks);
  const heldoutReference = heldoutTasks.length > 0 ? await generateInto('eval-tasks-scripted', evalLane, options.evalSeeds, heldoutTasks) : null;

  // 2. Corpus: the same number of completed records for both SFT arms.
  const corpusDir = join(out, 'corpus');
  const corpusDone = join(corpusDir, 'corpus.json');
  if (!existsSync(corpusDone)) {
    say('corpus: tokenizing the completed records');
    mkdirSync(corpusDir, { recursive: true });
    const { vocab } = await tinyVocab();
    const tokenizer = await openVocabTokenizer(vocab);
    try {
      const limit = clean ? Math.min(completedRecords(train).records.length, completedRecords(clean).records.length) : Infinity;
      const heldout = sftLines(completedRecords(reference).records, 'heldout', tokenizer.tokenize);
      const write = (name: string, records: readonly EpisodeRecord[]) => {
        const lines = [...sftLines(records, 'train', tokenizer.tokenize), ...heldout];
        writeFileAtomically(join(corpusDir, name), lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
        return lines.length - heldout.length;
      };
      const sft = completedRecords(train, limit).records;
      const summary: TrainEvalResult['corpus'] = { sft_records: sft.length, sft_lines: write('sft.jsonl', sft), clean_records: null, preference_pairs: null, pairs_by_rejected_variant: null };
      if (clean) {
        const cleanRecords = completedRecords(clean, limit).records;
        write('sft-clean.jsonl', cleanRecords);
        summary.clean_records = cleanRecords.length;
      }
      if (pairs) {
        const preferences = preferencePairs(pairs, tokenizer.tokenize);
        if (preferences.lines.length === 0) throw new FactoryError('usage', `the DPO seeds ${range(pairSeeds!)} gave no step-aligned pairs`, { fix: 'pass more --pair-seeds, or drop dpo from --arms' });
        writeFileAtomically(join(corpusDir, 'preferences.jsonl'), preferences.lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
        summary.preference_pairs = preferences.lines.length;
        summary.pairs_by_rejected_variant = preferences.by_rejected_variant;
      }
      writeFileAtomically(corpusDone, JSON.stringify(summary, null, 2) + '\n');
    } finally {
      await tokenizer.dispose();
    }
  }
  const corpus = JSON.parse(readFileSync(corpusDone, 'utf8')) as TrainEvalResult['corpus'];

  // 3. Models.
  const runs = new Map<Arm, TrainingRun>();
  const trainArm = async (arm: Arm): Promise<TrainingRun> => {
    const dir = join(out, 'models', arm);
    if (existsSync(join(dir, 'train.json'))) return await readTrainingRun(dir);
    say(`train ${arm}: ${armDescription(arm, checkpoint)}`);
    const onProgress = (line: string) => say(`train ${arm}: ${line.replace(/^(tiny-model|train-hf|convert): /, '')}`);
    if (checkpoint) {
      const job = { recipe: recipe as CheckpointRecipe, dir, corpus: join(corpusDir, arm === 'sft-clean' ? 'sft-clean.jsonl' : 'sft.jsonl'), python: options.python, onProgress };
      if (arm === 'base') return trainCheckpoint({ ...job, from: checkpoint.dir, untrained: true });
      if (arm === 'dpo') return trainCheckpoint({ ...job, from: runs.get('sft')!.state, preferences: join(corpusDir, 'preferences.jsonl') });
      return trainCheckpoint({ ...job, from: checkpoint.dir });
    }
    const tiny = recipe as TinyRecipe;
    if (arm === 'base') {
      // The base is the same architecture and vocabulary with its initial weights: no step taken.
      const untrained: TinyRecipe = { ...tiny, train: { ...tiny.train, ...NO_STEPS } };
      return trainTinyModel({ recipe: untrained, corpus: join(corpusDir, 'sft.jsonl'), dir, python: options.python, onProgress });
    }
    if (arm === 'dpo') {
      const sft = runs.get('sft')!;
      const onTop: TinyRecipe = { ...tiny, train: { ...tiny.train, ...NO_STEPS } };
      return trainTinyModel({ recipe: onTop, corpus: join(corpusDir, 'sft.jsonl'), dir, stateIn: sft.state, preferences: join(corpusDir, 'preferences.jsonl'), python: options.python, onProgress });
    }
    return trainTinyModel({ recipe: tiny, corpus: join(corpusDir, `${arm}.jsonl`), dir, python: options.python, onProgress });
  };
  for (const arm of arms) runs.set(arm, await trainArm(arm));

  // 4. Evaluation: the held-out seeds, faults on, each model as the policy; then, if asked, the held-out tasks.
  const describe = (arm: string) =>
    arm === 'scripted' ? "the lane's scripted solution (the reference calls are its)" : (ARMS as readonly string[]).includes(arm) ? armDescription(arm as Arm, checkpoint) : 'a policy served outside the experiment';
  const armResult = async (arm: string, records: EpisodeRecord[], path: string, run: TrainingRun | null, references: ReadonlyMap<string, EpisodeRecord>): Promise<ArmResult> => ({
    arm,
    description: describe(arm),
    model: run ? { gguf: relative(out, run.gguf), digest: run.digest } : null,
    training: run ? reportedStats(run.stats) : null,
    figures: policyFigures(records, references),
    records: { path: relative(out, path), sha256: await fileSha256(path) },
  });
  const evaluation = async (stage: string, tasks: string[], reference: EpisodeRecord[], referencePath: string): Promise<EvaluationResult> => {
    // Each arm served from its GGUF, then each outside policy: one directory each, sealed by a stage marker.
    const players = [
      ...arms.map((arm) => ({ name: arm as string, dir: join(out, stage, arm), run: runs.get(arm)!, play: { gguf: runs.get(arm)!.gguf, name: `${checkpoint ? 'checkpoint' : 'tiny'}-${arm}:latest` } })),
      ...outside.map((policy) => ({ name: policy.policy!, dir: join(out, stage, 'policies', policyDirectory(policy.policy!)), run: null, play: { policy } })),
    ];
    const played = new Map<string, EpisodeRecord[]>();
    for (const player of players) {
      const done = join(player.dir, 'experiment-stage.json');
      if (!existsSync(done)) {
        say(`${stage} ${player.name}: ${evalLane.name} seeds ${range(options.evalSeeds)}, tasks ${tasks.join(', ')}`);
        await evaluatePolicy({ lane: evalLane, seeds: options.evalSeeds, tasks, dir: player.dir, ...player.play, onEpisode: progress(`${stage} ${player.name}`) });
        writeFileAtomically(done, JSON.stringify({ stage: `${stage} ${player.name}` }) + '\n');
      }
      played.set(player.name, readEpisodes(join(player.dir, 'episodes.jsonl')));
    }
    const references = new Map(reference.map((record) => [episodeKey(record), record]));
    const comparisons: PairedComparison[] = [];
    const compare = (first: string, second: string) => {
      if (played.has(first) && played.has(second)) comparisons.push(comparePolicies(first, played.get(first)!, second, played.get(second)!));
    };
    compare('base', 'sft');
    compare('sft-clean', 'sft');
    compare('sft', 'dpo');
    for (const policy of outside) {
      compare('base', policy.policy!);
      compare('sft', policy.policy!);
    }
    const results: ArmResult[] = [];
    for (const player of players) results.push(await armResult(player.name, played.get(player.name)!, join(player.dir, 'episodes.jsonl'), player.run, references));
    return { tasks, scripted: await armResult('scripted', reference, referencePath, null, references), arms: results, comparisons };
  };
  const seedsEvaluation = await evaluation('eval', trainTasks, reference, join(out, data['eval-scripted']!.path));
  const tasksEvaluation = heldoutReference ? await evaluation('eval-tasks', heldoutTasks, heldoutReference, join(out, data['eval-tasks-scripted']!.path)) : null;

  // 5. The result: figures, comparisons, curves and pins.
  const curves: TrainEvalResult['curves'] = {};
  for (const arm of arms) if (runs.get(arm)!.curve.length > 0) curves[arm] = runs.get(arm)!.curve;
  return {
    format: 'episode-factory.experiment.v1',
    lane: { name: options.lane.name, sha256: options.lane.sha256 },
    train_tasks: trainTasks,
    train_seeds: range(options.trainSeeds),
    eval_seeds: range(options.evalSeeds),
    pair_seeds: pairSeeds ? range(pairSeeds) : null,
    base: checkpoint ?? 'tiny',
    recipe: { name: options.recipe, sha256: hashCanonical(recipe), config: recipe },
    factory_version: FACTORY_VERSION,
    data,
    corpus,
    scripted: seedsEvaluation.scripted,
    arms: seedsEvaluation.arms,
    comparisons: seedsEvaluation.comparisons,
    heldout_tasks: tasksEvaluation,
    curves,
  };
}
