// Tests the experiment report: the tables show the result's rates as the
// dataset report writes them, a fault a policy never met reads "–", the
// comparison quotes its p-value, the learning-curve chart draws one line per
// curve and one dot per held-out loss, thins long curves, marks phase changes,
// escapes text, and the same result renders to the same bytes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rateText } from '../../src/dataset/svg-charts.js';
import type { PolicyFigures } from '../../src/experiment/evaluation-metrics.js';
import { experimentHtml, experimentMarkdown } from '../../src/experiment/experiment-report.js';
import type { Arm, ArmResult, TrainEvalResult } from '../../src/experiment/train-eval.js';
import { ARM_DESCRIPTIONS } from '../../src/experiment/train-eval.js';
import { TRAINING_RECIPES } from '../../src/experiment/training-recipes.js';
import { mcnemarExact } from '../../src/statistics/mcnemar-test.js';
import { wilsonInterval } from '../../src/statistics/wilson-interval.js';

const HASH = 'a'.repeat(64);

function figures(completed: number, recovery: Record<string, [number, number]>): PolicyFigures {
  return {
    episodes: 10,
    completed: wilsonInterval(completed, 10),
    calls: 40,
    well_formed: wilsonInterval(30, 40),
    exact: wilsonInterval(20, 40),
    recovery: Object.fromEntries(Object.entries(recovery).map(([kind, [successes, n]]) => [kind, wilsonInterval(successes, n)])),
  };
}

function arm(name: string, description: string, policyFigures: PolicyFigures, trained: boolean): ArmResult {
  return {
    arm: name as Arm,
    description,
    model: trained ? { gguf: `out/models/${name}/model.gguf`, digest: `${name}-digest` } : null,
    training: null,
    figures: policyFigures,
    records: { path: `out/eval/${name}/episodes.jsonl`, sha256: HASH },
  };
}

function curve(length: number, heldoutEvery: number): TrainEvalResult['curves'][string] {
  return Array.from({ length }, (_, index) => ({
    step: index + 1,
    phase: index < length * 0.4 ? 'windows' : index < length * 0.8 ? 'tails' : 'prefix',
    loss: 8 / (1 + index / 10),
    ...((index + 1) % heldoutEvery === 0 ? { heldout_loss: 9 / (1 + index / 10) } : {}),
  }));
}

function experiment(lane = 'tool-world-v1', curves: TrainEvalResult['curves'] = { base: curve(20, 10), sft: curve(50, 25) }): TrainEvalResult {
  return {
    format: 'episode-factory.experiment.v1',
    lane: { name: lane, sha256: HASH },
    train_tasks: ['find-open-bugs', 'close-named-issue'],
    train_seeds: '0..99',
    eval_seeds: '1000..1009',
    pair_seeds: null,
    base: 'tiny',
    recipe: { name: 'toy', sha256: HASH, config: TRAINING_RECIPES.toy },
    factory_version: '0.0.0-test',
    data: { train: { path: 'out/data/train/episodes.jsonl', records: 100, completed: 90, sha256: HASH } },
    corpus: { sft_records: 90, sft_lines: 400, clean_records: null, preference_pairs: null, pairs_by_rejected_variant: null },
    scripted: arm('scripted', "the lane's scripted solution", figures(9, { timeout: [2, 3], tool_error: [4, 4] }), false),
    arms: [arm('base', ARM_DESCRIPTIONS.base, figures(0, { timeout: [0, 3] }), true), arm('sft', ARM_DESCRIPTIONS.sft, figures(5, { timeout: [1, 3], tool_error: [2, 4] }), true)],
    comparisons: [{ first: 'base', second: 'sft', episodes: 10, difference: 0.5, mcnemar: mcnemarExact(0, 5) }],
    heldout_tasks: null,
    curves,
  };
}

/** The cells of the Markdown table row whose first cell is `first`. */
function rowCells(markdown: string, first: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith(`| ${first} |`))
    .map((line) => line.slice(2, -2).split(' | '));
}

test('the before/after table shows each policy, scripted first, with completion as rateText writes it', () => {
  const result = experiment();
  const markdown = experimentMarkdown(result);
  const [sft] = rowCells(markdown, 'sft');
  assert.ok(sft);
  assert.equal(sft[3], rateText(result.arms[1]!.figures.completed));
  assert.equal(sft[3], '5/10 · 50% [24%, 76%]');
  assert.equal(sft[1], ARM_DESCRIPTIONS.sft);
  assert.match(markdown, /^# Experiment: tool-world-v1 · train seeds 0\.\.99 · eval seeds 1000\.\.1009 · recipe toy$/m);
  const order = ['scripted', 'base', 'sft'].map((name) => markdown.indexOf(`| ${name} |`));
  assert.deepEqual([...order].sort((a, b) => a - b), order);
});

test('the fault table has a row per kind any policy met, and – where a policy met none', () => {
  const markdown = experimentMarkdown(experiment());
  assert.ok(markdown.includes('| fault kind | scripted | base | sft |'));
  const [toolError] = rowCells(markdown, 'tool_error');
  assert.deepEqual(toolError, ['tool_error', rateText(wilsonInterval(4, 4)), '–', rateText(wilsonInterval(2, 4))]);
  assert.ok(markdown.indexOf('| timeout |') < markdown.indexOf('| tool_error |'));
});

test('a comparison line reads second vs first with the exact McNemar p-value', () => {
  const markdown = experimentMarkdown(experiment());
  assert.ok(markdown.includes('- sft vs base: completed 5/10 vs 0/10, paired difference +0.500 (10 episodes), only base 0, only sft 5, exact McNemar p = 0.0625'));
  assert.ok(experimentHtml(experiment()).includes('exact McNemar p = 0.0625'));
  assert.ok(markdown.includes(`- model sft: out/models/sft/model.gguf · sha256 sft-digest`));
  assert.ok(markdown.includes(`- evaluation scripted: out/eval/scripted/episodes.jsonl · sha256 ${HASH}`));
});

test('the page draws one line per curve, one dot per held-out loss, and the phase changes', () => {
  const result = experiment();
  const html = experimentHtml(result);
  assert.match(html, /^<!doctype html>/);
  assert.equal(html.match(/<polyline /g)?.length, 2);
  assert.equal(html.match(/<circle class="heldout"/g)?.length, 2 + 2);
  assert.ok(html.includes(`<title>sft: held-out loss ${result.curves.sft![49]!.heldout_loss} at step 50</title>`));
  assert.ok(html.includes('data-phase="tails"') && html.includes('data-phase="prefix"'));
  assert.ok(html.includes('>loss (nats per token)</text>') && html.includes('>step</text>'));
  assert.ok(!html.includes('<script'));
});

test('held-out tasks get their own tables and comparisons after the held-out seeds', () => {
  const result = experiment();
  result.heldout_tasks = {
    tasks: ['relabel-issue'],
    scripted: arm('scripted', "the lane's scripted solution", figures(8, { timeout: [1, 2] }), false),
    arms: [arm('base', ARM_DESCRIPTIONS.base, figures(0, {}), true), arm('sft', ARM_DESCRIPTIONS.sft, figures(1, {}), true)],
    comparisons: [{ first: 'base', second: 'sft', episodes: 10, difference: 0.1, mcnemar: mcnemarExact(0, 1) }],
  };
  const markdown = experimentMarkdown(result);
  const heading = markdown.indexOf('## Held-out tasks: relabel-issue (never trained on), the same seeds');
  assert.ok(heading > markdown.indexOf('- sft vs base: completed 5/10'), 'after the held-out seeds');
  assert.ok(markdown.indexOf('- sft vs base: completed 1/10 vs 0/10', heading) > heading);
  assert.deepEqual(rowCells(markdown, 'sft').map((cells) => cells[3]), ['5/10 · 50% [24%, 76%]', rateText(wilsonInterval(1, 10))]);
  const html = experimentHtml(result);
  assert.ok(html.includes('id="tasks-figures"') && html.includes('Held-out tasks (relabel-issue, never trained on): Before and after training'));
});

test('text from the result is escaped', () => {
  const html = experimentHtml(experiment('lane<&>"x', { 'sft<b>': curve(5, 5) }));
  assert.ok(html.includes('<title>Experiment: lane&lt;&amp;&gt;&quot;x</title>'));
  assert.ok(html.includes('data-arm="sft&lt;b&gt;"'));
  assert.ok(!html.includes('lane<&>') && !html.includes('sft<b>'));
});

test('the same result renders to the same bytes', () => {
  assert.equal(experimentMarkdown(experiment()), experimentMarkdown(experiment()));
  assert.equal(experimentHtml(experiment()), experimentHtml(experiment()));
});

test('a curve of 5,000 steps is drawn with at most 400 points, every held-out loss kept', () => {
  const html = experimentHtml(experiment('tool-world-v1', { sft: curve(5000, 100) }));
  const points = html.match(/<polyline [^>]*points="([^"]*)"/)![1]!.split(' ');
  assert.ok(points.length > 300 && points.length <= 400, `${points.length} points`);
  assert.equal(html.match(/<circle class="heldout"/g)?.length, 50);
  assert.ok(html.includes('data-steps="5000"'));
});
