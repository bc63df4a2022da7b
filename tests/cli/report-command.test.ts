// Tests the `report` command as a user runs it: where the file goes, the
// manifest that lists it (so audit stays clean), the same bytes on a rerun,
// deduplicated and damaged datasets, progress on a terminal, and the errors
// that name the fix.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { ReportSummary } from '../../src/dataset/dataset-report.js';
import { sealDataset } from '../fixtures/sealed-dataset.js';
import { copySample, CLI, REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1');

/** A copy of the committed sample, with the manifest a run would have written (the sample keeps only its records). */
async function copyOfSample(): Promise<{ work: string; dir: string }> {
  const work = temporaryDirectory('ef-report-command-');
  const dir = join(work, 'faults');
  copySample('tool-world-faults-v1', dir);
  await sealDataset(dir);
  return { work, dir };
}

type Summary = ReportSummary;

describe('report command', () => {
  it('writes <dir>/report.html, lists it in the manifest so audit passes, and gives the same bytes twice', () => {
    // A freshly generated dataset, with the manifest and traces the committed sample does not keep.
    const dir = join(temporaryDirectory('ef-report-command-'), 'generated');
    const generated = runCli(REPO_ROOT, 'generate', 'tool-world-v1', '--out', dir, '--quiet');
    assert.equal(generated.status, 0, generated.stderr);
    const first = runCli(REPO_ROOT, 'report', dir);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, new RegExp(`^report ${dir}: 40 records, 40 episodes in the viewer, \\d+ KiB -> ${join(dir, 'report.html')}\\n$`));
    const page = readFileSync(join(dir, 'report.html'));
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { operation: string; files: { path: string }[] };
    assert.ok(manifest.files.some((file) => file.path === 'report.html'));
    assert.equal(manifest.operation, 'generate', 'the report does not change what produced the data');
    const audit = runCli(REPO_ROOT, 'audit', dir, '--sample', '1');
    assert.equal(audit.status, 0, audit.stdout + audit.stderr);

    const again = runCli(REPO_ROOT, 'report', dir, '--json');
    assert.equal(again.status, 0, again.stderr);
    const summary = JSON.parse(again.stdout) as Summary;
    assert.deepEqual(readFileSync(join(dir, 'report.html')), page, 'same dataset, same bytes');
    assert.equal(summary.bytes, page.length);
    assert.deepEqual(
      [summary.records, summary.embedded, summary.sampled, summary.problems, summary.rejected, summary.duplicates_dropped, summary.in_manifest],
      [40, 40, false, 0, 0, null, true],
    );
    assert.ok(!readFileSync(join(dir, 'report.html'), 'utf8').includes('.tmp'), 'no temporary name leaks into the page');
    assert.ok(!existsSync(join(dir, '.report.html.tmp')));
    assert.equal(runCli(REPO_ROOT, 'card', dir).status, 0);
    assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /`report\.html`.*episode viewer/, 'the dataset card describes the report');
  });

  it('writes elsewhere with --out without touching the dataset, and embeds fewer with --max-episodes', async () => {
    const { work, dir } = await copyOfSample();
    const before = readdirSync(dir).sort();
    const out = join(work, 'nested', 'deeper', 'faults.html');
    const result = runCli(REPO_ROOT, 'report', dir, '--out', out, '--max-episodes', '10', '--json');
    assert.equal(result.status, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as Summary;
    assert.deepEqual([summary.path, summary.embedded, summary.sampled, summary.in_manifest], [out, 10, true, false]);
    assert.ok(existsSync(out));
    assert.deepEqual(readdirSync(dir).sort(), before, 'nothing added to the dataset');
    assert.match(readFileSync(out, 'utf8'), /The viewer holds 10 episodes of 80 records/);
  });

  it('reports the duplicates dedup dropped', async () => {
    const { work } = await copyOfSample();
    const deduplicated = join(work, 'deduplicated');
    const dedup = runCli(REPO_ROOT, 'dedup', SAMPLE, '--out', deduplicated, '--json');
    assert.equal(dedup.status, 0, dedup.stderr);
    const dropped = (JSON.parse(dedup.stdout) as { dropped: number }).dropped;
    assert.ok(dropped > 0, 'the faults sample has near duplicates');
    const result = runCli(REPO_ROOT, 'report', deduplicated, '--json');
    assert.equal(result.status, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as Summary;
    assert.equal(summary.duplicates_dropped, dropped);
    assert.equal(summary.records, 80 - dropped);
    assert.match(readFileSync(summary.path, 'utf8'), new RegExp(`data-tile="dropped"><div class="tile-value">${dropped}<`));
  });

  it('reports a dataset with unreadable lines, counting and naming them', async () => {
    const { dir } = await copyOfSample();
    appendFileSync(join(dir, 'episodes.jsonl'), 'not json\n');
    // As a run would have written it, so the line is the report's to find, not the manifest check's.
    rmSync(join(dir, 'manifest.json'));
    await sealDataset(dir);
    const result = runCli(REPO_ROOT, 'report', dir);
    assert.equal(result.status, 1, 'the report is written, and the exit status says a line is not a record');
    assert.match(result.stderr, /faults\/episodes\.jsonl:81: not valid JSON/);
    assert.match(result.stdout, /80 records, 80 episodes in the viewer, 1 unreadable line left out \(listed in the report\)/);
    assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /<code>episodes\.jsonl:81<\/code> not valid JSON/);
  });

  it('refuses what is not a dataset, a bad budget and a directory as --out, naming the fix', async () => {
    const { work, dir } = await copyOfSample();
    const missing = runCli(REPO_ROOT, 'report', join(work, 'nothing-here'));
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /is not a directory.*fix: pass a directory written by `episode-factory generate`/);
    const budget = runCli(REPO_ROOT, 'report', dir, '--max-episodes', 'lots');
    assert.equal(budget.status, 2);
    assert.match(budget.stderr, /--max-episodes.*takes a whole number >= 0/);
    mkdirSync(join(work, 'a-directory'));
    const directory = runCli(REPO_ROOT, 'report', dir, '--out', join(work, 'a-directory'));
    assert.equal(directory.status, 2);
    assert.match(directory.stderr, /is a directory.*fix: name the file/);
  });

  it('shows progress on a terminal only', async () => {
    const { work, dir } = await copyOfSample();
    const command = [process.execPath, CLI, 'report', dir, '--out', join(work, 'terminal.html')].map((part) => `'${part}'`).join(' ');
    // `script` gives the command a real pseudo-terminal, as a person's shell would.
    const terminal = spawnSync('script', ['-qfec', `stty cols 160; ${command}`, '/dev/null'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(terminal.status, 0, terminal.stderr + terminal.stdout);
    assert.match(terminal.stdout, /\rreport [^\n]*: (counting|embedding episodes from) line \d+/);
    const piped = runCli(REPO_ROOT, 'report', dir, '--out', join(work, 'piped.html'));
    assert.equal(piped.status, 0);
    assert.equal(piped.stderr, '');
  });

  it('explains itself in --help', () => {
    const help = runCli(REPO_ROOT, 'report', '--help');
    assert.equal(help.status, 0);
    for (const text of ['--out <file>', '--max-episodes <n>', '--json', 'file://', 'Wilson', 'episode viewer']) assert.ok(help.stdout.includes(text), text);
  });
});
