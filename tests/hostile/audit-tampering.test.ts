// `audit` against someone who edits a dataset and then rewrites manifest.json
// so every sha256 and size matches again: the manifest proves nothing then,
// and audit must still find the edit from the data itself. The columnar
// copies are compared with episodes.jsonl row for row; `--full` reproduces
// every record, so an edit made consistently in all three files is found too.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { tableFromIPC } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { sampleIds } from '../../src/dataset/audit-checks.js';
import { DEFAULT_SAMPLE } from '../../src/dataset-replay/audit-dataset.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import { writeColumnar } from '../../src/records/columnar-files.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { CLI, REPO_ROOT, runCli, temporaryDirectory } from '../helpers.js';
import { rewriteManifest } from '../fixtures/sealed-dataset.js';

const TIMEOUT = { timeout: 120_000 };
const RECORDS = 40;
const pristine = temporaryDirectory('ef-hostile-');

before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  // 5 tasks x seeds 0..7: twice the default sample, so half the records are never reproduced by a plain audit.
  await generateDataset({ lane: loadLane('tool-world-v1', REPO_ROOT), outDir: pristine, seeds: { from: 0, to: 7 } });
});

function copy(): string {
  const dir = temporaryDirectory('ef-hostile-');
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

const lines = (dir: string) => readFileSync(join(dir, 'episodes.jsonl'), 'utf8').split('\n').filter(Boolean);
const records = (dir: string) => lines(dir).map((line) => JSON.parse(line) as EpisodeRecord);

/** A record whose final answer contains a digit, outside the default sample (or anywhere, when `outsideSample` is false). */
function target(dir: string, outsideSample: boolean): { index: number; record: EpisodeRecord; final: number } {
  const all = records(dir);
  const sampled = new Set(sampleIds(all.map((record) => record.record_id), DEFAULT_SAMPLE));
  for (const [index, record] of all.entries()) {
    if (index === 0 || (outsideSample && sampled.has(record.record_id))) continue;
    const final = record.messages.length - 1;
    if (record.messages[final]!.role === 'assistant' && /\d/.test(record.messages[final]!.content)) return { index, record, final };
  }
  throw new Error('no record with a number in its final answer');
}

/** The final answer with its first digit changed: the answer now names another issue, count or amount. */
function falsified(text: string): string {
  return text.replace(/\d/, (digit) => String((Number(digit) + 1) % 10));
}

/** episodes.jsonl with one record's final answer falsified, as a JSONL file at `path`. */
function writeEditedJsonl(dir: string, path: string, index: number, final: number): EpisodeRecord {
  const all = lines(dir);
  const record = JSON.parse(all[index]!) as EpisodeRecord;
  record.messages[final]!.content = falsified(record.messages[final]!.content);
  all[index] = JSON.stringify(record);
  writeFileSync(path, all.join('\n') + '\n');
  return record;
}

/** The finding quotes both values around the changed digit: the copy's first, then the record's. */
function assertExcerpts(failure: string, answer: string): void {
  const quoted = /: "(.*)" here, "(.*)" in episodes\.jsonl$/.exec(failure);
  assert.ok(quoted, failure);
  const [copy, original] = [quoted[1]!.replace(/^…|…$/g, ''), quoted[2]!.replace(/^…|…$/g, '')];
  assert.ok(answer.includes(original) && falsified(answer).includes(copy) && copy !== original, failure);
}

function audit(dir: string, ...flags: string[]) {
  const result = runCli(REPO_ROOT, 'audit', dir, ...flags);
  return { ...result, failures: result.stdout.split('\n').filter((line) => line.startsWith('FAIL ')) };
}

describe('audit against a rewritten manifest', () => {
  it('finds a byte changed inside episodes.arrow that still decodes, naming the file, the row, the record and the column', TIMEOUT, async () => {
    const dir = copy();
    const { index, record, final } = target(dir, false);
    const path = join(dir, 'episodes.arrow');
    const bytes = readFileSync(path);
    const answer = Buffer.from(record.messages[final]!.content);
    const at = bytes.indexOf(answer);
    assert.ok(at > 0 && bytes.lastIndexOf(answer) === at, 'the answer occurs once in the string data of the Arrow file');
    const digit = at + answer.findIndex((byte) => byte >= 0x30 && byte <= 0x39);
    bytes[digit] = 0x30 + ((bytes[digit]! - 0x30 + 1) % 10);
    writeFileSync(path, bytes);
    // It still decodes, with the changed answer where the record's was.
    const decoded = tableFromIPC(readFileSync(path)).get(index)!.toJSON() as { messages: { get(i: number): { content: string } } };
    assert.equal(decoded.messages.get(final).content, falsified(record.messages[final]!.content));
    rewriteManifest(dir, 'episodes.arrow');

    const result = audit(dir);
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.equal(result.failures.length, 1, result.stdout);
    assert.ok(
      result.failures[0]!.startsWith(`FAIL columnar: episodes.arrow row ${index} (${record.record_id}): column messages[${final}].content differs from episodes.jsonl:${index + 1}: `),
      result.failures[0],
    );
    assertExcerpts(result.failures[0]!, record.messages[final]!.content);
    assert.match(result.stdout, /manifest ok, lines ok, ids ok, lineage ok, provenance ok, turns ok, columnar 1 finding, reproduction ok\n$/);
  });

  it('finds episodes.parquet rewritten with one value changed, naming the file, the row, the record and the column', TIMEOUT, async () => {
    const dir = copy();
    const { index, record, final } = target(dir, false);
    const work = temporaryDirectory('ef-hostile-work-');
    writeEditedJsonl(dir, join(work, 'edited.jsonl'), index, final);
    // The attacker writes the Parquet copy with the factory's own writer, from the edited records.
    await writeColumnar(join(work, 'edited.jsonl'), { parquet: join(dir, 'episodes.parquet') });
    const table = tableFromIPC(parquet.readParquet(readFileSync(join(dir, 'episodes.parquet'))).intoIPCStream());
    assert.equal((table.get(index)!.toJSON() as { messages: { get(i: number): { content: string } } }).messages.get(final).content, falsified(record.messages[final]!.content));
    rewriteManifest(dir, 'episodes.parquet');

    const result = audit(dir);
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.equal(result.failures.length, 1, result.stdout);
    assert.ok(
      result.failures[0]!.startsWith(`FAIL columnar: episodes.parquet row ${index} (${record.record_id}): column messages[${final}].content differs from episodes.jsonl:${index + 1}: `),
      result.failures[0],
    );
    assertExcerpts(result.failures[0]!, record.messages[final]!.content);
  });

  it('finds a record edited in episodes.jsonl outside the sample: the copies disagree with it, and --full names the record', TIMEOUT, async () => {
    const dir = copy();
    const { index, record, final } = target(dir, true);
    writeEditedJsonl(dir, join(dir, 'episodes.jsonl'), index, final);
    rewriteManifest(dir, 'episodes.jsonl');

    const plain = audit(dir, '--json');
    assert.equal(plain.status, 1, plain.stdout + plain.stderr);
    const report = JSON.parse(plain.stdout) as { sampled: string[]; findings: { check: string; where: string; reason: string }[] };
    assert.ok(!report.sampled.includes(record.record_id), 'the edited record is outside the sample');
    assert.deepEqual(
      report.findings.map((finding) => `${finding.check}: ${finding.where}`),
      ['episodes.arrow', 'episodes.parquet'].map((file) => `columnar: ${file} row ${index} (${record.record_id})`),
      'a plain audit sees the copies disagree with the JSONL, not which side was edited',
    );

    const full = audit(dir, '--full');
    assert.equal(full.status, 1, full.stdout + full.stderr);
    assert.ok(full.failures.some((line) => line.startsWith(`FAIL reproduction: episodes.jsonl:${index + 1} (${record.record_id}): `)), full.stdout);
    assert.ok(full.failures.every((line) => line.includes(record.record_id)), full.stdout);
  });

  it('finds a record edited consistently in episodes.jsonl, episodes.arrow and episodes.parquet only with --full', TIMEOUT, async () => {
    const dir = copy();
    const { index, record, final } = target(dir, true);
    const work = temporaryDirectory('ef-hostile-work-');
    writeEditedJsonl(dir, join(work, 'episodes.jsonl'), index, final);
    cpSync(join(work, 'episodes.jsonl'), join(dir, 'episodes.jsonl'));
    await writeColumnar(join(dir, 'episodes.jsonl'), { arrow: join(dir, 'episodes.arrow'), parquet: join(dir, 'episodes.parquet') });
    rewriteManifest(dir, 'episodes.jsonl', 'episodes.arrow', 'episodes.parquet');

    // The documented limit of a sampled audit: every file agrees with every other, and the record is not in the sample.
    const plain = audit(dir);
    assert.equal(plain.status, 0, plain.stdout + plain.stderr);

    const full = audit(dir, '--full');
    assert.equal(full.status, 1, full.stdout + full.stderr);
    assert.ok(full.failures.length > 0 && full.failures.every((line) => line.startsWith(`FAIL reproduction: episodes.jsonl:${index + 1} (${record.record_id}): `)), full.stdout);
    assert.match(full.stdout, new RegExp(`: ${RECORDS} records, ${RECORDS} reproduced \\(every record\\); .*reproduction \\d+ findings?\\n$`));
  });

  it('names a copy that no longer decodes, and one with rows missing, instead of stopping', TIMEOUT, async () => {
    const dir = copy();
    const arrow = readFileSync(join(dir, 'episodes.arrow'));
    writeFileSync(join(dir, 'episodes.arrow'), arrow.subarray(0, Math.floor(arrow.length * 0.6)));
    const work = temporaryDirectory('ef-hostile-work-');
    writeFileSync(join(work, 'shorter.jsonl'), lines(dir).slice(0, -1).join('\n') + '\n');
    await writeColumnar(join(work, 'shorter.jsonl'), { parquet: join(dir, 'episodes.parquet') });
    rewriteManifest(dir, 'episodes.arrow', 'episodes.parquet');

    const result = audit(dir, '--sample', '0');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.ok(result.failures.some((line) => /^FAIL columnar: episodes\.arrow: does not decode after row \d+: /.test(line)), result.stdout);
    const last = records(dir).at(-1)!;
    assert.ok(result.failures.includes(`FAIL columnar: episodes.parquet row ${RECORDS - 1}: the copy ends after ${RECORDS - 1} rows, episodes.jsonl has ${RECORDS}: records from line ${RECORDS} (${last.record_id}) on are missing`), result.stdout);
  });

  it('names a columnar copy that the manifest lists and that is gone', TIMEOUT, () => {
    const dir = copy();
    rmSync(join(dir, 'episodes.parquet'));
    const result = audit(dir, '--sample', '0');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.deepEqual(result.failures, ['FAIL manifest: episodes.parquet: listed in the manifest but missing']);
  });

  it('passes a clean dataset with --full, reproducing every record; --json stays one object', TIMEOUT, () => {
    const result = audit(pristine, '--full');
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.equal(result.stdout, `audit ${pristine}: ${RECORDS} records, ${RECORDS} reproduced (every record); manifest ok, lines ok, ids ok, lineage ok, provenance ok, turns ok, columnar ok, reproduction ok\n`);
    assert.equal(result.stderr, '', 'no progress line when stderr is not a terminal');
    const json = audit(pristine, '--full', '--json');
    assert.equal(json.status, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { ok: boolean; full: boolean; records: number; sampled: string[]; checks: Record<string, number> };
    assert.deepEqual([report.ok, report.full, report.records, report.sampled.length], [true, true, RECORDS, RECORDS]);
    assert.deepEqual(report.sampled, records(pristine).map((record) => record.record_id), 'every record, in file order');
    assert.equal(report.checks.columnar, 0);
  });

  it('shows progress on a terminal, and refuses --full with --sample (exit 2)', TIMEOUT, () => {
    const command = [process.execPath, CLI, 'audit', pristine, '--full'].map((part) => `'${part}'`).join(' ');
    // `script` gives the command a real pseudo-terminal, as a person's shell would.
    const terminal = spawnSync('script', ['-qfec', `stty cols 160; ${command}`, '/dev/null'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(terminal.status, 0, terminal.stderr + terminal.stdout);
    assert.match(terminal.stdout, /\raudit [^\n]*: reproduced \d+\/40 records/);
    const both = audit(pristine, '--full', '--sample', '3');
    assert.equal(both.status, 2);
    assert.match(both.stderr, /--full reproduces every record.*fix: pass either --full or --sample N, not both/);
  });
});
