// Tests the `stats` and `card` commands through commander, wired the way
// src/cli/main.ts wires commands, with captured output streams.

import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Command, CommanderError } from 'commander';
import { registerCard } from '../../src/cli/card-command.js';
import type { Streams } from '../../src/cli/output.js';
import { registerStats } from '../../src/cli/stats-command.js';
import { FactoryError } from '../../src/core/errors.js';
import { readDataset } from '../../src/dataset/dataset-reader.js';
import { computeStats } from '../../src/dataset/dataset-stats.js';
import { formatRate, wilsonInterval } from '../../src/statistics/wilson-interval.js';
import { sealDataset } from '../fixtures/sealed-dataset.js';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

interface Run {
  stdout: string;
  stderr: string;
  /** What the command set as its exit status, when it set one. */
  status?: number;
}

function captured(): { streams: Streams; output: Run } {
  const output: Run = { stdout: '', stderr: '' };
  const sink = (key: 'stdout' | 'stderr') => ({ write: (chunk: string) => ((output[key] += chunk), true) }) as unknown as Streams['stdout'];
  return { streams: { stdout: sink('stdout'), stderr: sink('stderr') }, output };
}

async function run(...args: string[]): Promise<Run> {
  const { streams, output } = captured();
  const program = new Command('episode-factory').exitOverride().configureOutput({
    writeOut: (text) => streams.stdout.write(text),
    writeErr: (text) => streams.stderr.write(text),
  });
  registerStats(program, streams, (status) => (output.status = status));
  registerCard(program, streams);
  for (const command of program.commands) command.exitOverride().configureOutput(program.configureOutput());
  try {
    await program.parseAsync(['node', 'episode-factory', ...args]);
  } catch (error) {
    // main.ts turns a shown help into exit 0; the text is what matters here.
    if (error instanceof CommanderError && error.code === 'commander.helpDisplayed') return output;
    throw error;
  }
  return output;
}

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1');

describe('stats command', () => {
  it('prints the statistics as text with intervals', async () => {
    const lines = readFileSync(join(SAMPLE, 'episodes.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
    const completed = lines.filter((line) => (JSON.parse(line) as { result: { task_completed: boolean } }).result.task_completed).length;
    const { stdout, stderr, status } = await run('stats', SAMPLE);
    // The committed sample keeps only its records: there is no manifest to check them against.
    assert.equal(stderr, `stats: warning: ${SAMPLE} has no manifest.json: its files cannot be checked against the run that wrote them\n`);
    assert.equal(status, 0);
    assert.ok(stdout.startsWith(`stats ${SAMPLE}\n`));
    assert.ok(stdout.includes(`task completion  ${formatRate(wilsonInterval(completed, lines.length))}\n`));
    assert.match(stdout, /faults: \d+ fired in \d+ episodes/);
  });

  it('prints the DatasetStats object with --json', async () => {
    const { stdout } = await run('stats', SAMPLE, '--json');
    assert.deepEqual(JSON.parse(stdout), computeStats(await readDataset(SAMPLE)));
  });

  it('still prints statistics for a dataset with problems, naming each on stderr', async () => {
    const dir = temporaryDirectory();
    const lines = readFileSync(join(SAMPLE, 'episodes.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
    writeFileSync(join(dir, 'episodes.jsonl'), [lines[0], 'not json', lines[1], lines[2]!.slice(0, 50)].join('\n'));
    await sealDataset(dir);
    const { stdout, stderr, status } = await run('stats', dir);
    assert.match(stdout, /^records +2$/m);
    assert.match(stdout, /^problems +2 /m);
    assert.equal(status, 1, 'the statistics are printed, and the exit status says some lines are not records');
    assert.deepEqual(
      stderr.trimEnd().split('\n').map((line) => line.replace(/: .*$/, '')),
      [`${join(dir, 'episodes.jsonl')}:2`, `${join(dir, 'episodes.jsonl')}:4`],
    );
  });

  it('refuses a directory that is not a dataset', async () => {
    await assert.rejects(run('stats', join(temporaryDirectory(), 'missing')), (error: unknown) => error instanceof FactoryError && error.exitStatus === 2);
  });

  it('explains itself in --help', async () => {
    const { stdout } = await run('stats', '--help');
    for (const words of ['Usage: episode-factory stats [options] <dir>', '--json', 'Wilson', 'stderr', 'Examples:']) assert.ok(stdout.includes(words), words);
  });
});

describe('card command', () => {
  it('writes README.md and prints its path', async () => {
    const dir = join(temporaryDirectory(), 'faults');
    mkdirSync(dir);
    copyFileSync(join(SAMPLE, 'episodes.jsonl'), join(dir, 'episodes.jsonl'));
    await sealDataset(dir);
    const { stdout, stderr } = await run('card', dir);
    assert.equal(stderr, '');
    assert.equal(stdout, `${join(dir, 'README.md')}\n`);
    assert.ok(existsSync(join(dir, 'README.md')));
    const card = readFileSync(join(dir, 'README.md'), 'utf8');
    assert.ok(card.startsWith('---\n'));
    assert.match(card, /^license: mit$/m, "the lane's dataset_card.license");
  });

  it('explains itself in --help', async () => {
    const { stdout } = await run('card', '--help');
    for (const words of ['Usage: episode-factory card [options] <dir>', '--license <id>', 'split.json', 'README.md', 'Examples:']) assert.ok(stdout.includes(words), words);
  });

  it('passes --license to the front matter', async () => {
    const dir = join(temporaryDirectory(), 'licensed');
    mkdirSync(dir);
    copyFileSync(join(SAMPLE, 'episodes.jsonl'), join(dir, 'episodes.jsonl'));
    await sealDataset(dir);
    await run('card', dir, '--license', 'apache-2.0');
    assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /^license: apache-2\.0$/m);
  });

  it('exits 1 without writing when no lane sets a license, and writes a draft with --draft', async () => {
    const dir = join(temporaryDirectory(), 'unlicensed');
    mkdirSync(dir);
    copyFileSync(join(SAMPLE, 'episodes.jsonl'), join(dir, 'episodes.jsonl'));
    await sealDataset(dir);
    const lane = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-faults-v1.json'), 'utf8')) as Record<string, unknown>;
    delete lane.dataset_card;
    const laneFile = join(temporaryDirectory(), 'tool-world-faults-v1.json');
    writeFileSync(laneFile, JSON.stringify(lane));
    const refused = await runCliAsync(REPO_ROOT, 'card', dir, '--lane', laneFile);
    assert.equal(refused.status, 1);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^episode-factory: card .*unlicensed: not written: lane tool-world-faults-v1 sets no dataset_card\.license — fix: set "dataset_card": \{"license": "<id>"\} in the lane.*--license <id>.*--draft/m);
    assert.ok(!existsSync(join(dir, 'README.md')));
    const draft = await runCliAsync(REPO_ROOT, 'card', dir, '--lane', laneFile, '--draft', '--json');
    assert.equal(draft.status, 0);
    assert.equal(JSON.parse(draft.stdout).draft, true);
    assert.match(draft.stderr, /draft, not fit to publish: lane tool-world-faults-v1 sets no dataset_card\.license/);
    assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /^license: other$/m);
  });
});
