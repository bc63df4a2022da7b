// `audit` finds every kind of damage: edited, truncated, added or missing
// files, repeated ids, unresolved lineage, records without provenance, and
// records that do not reproduce.

import assert from 'node:assert/strict';
import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { auditDataset } from '../../src/dataset-replay/audit-dataset.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const pristine = temporaryDirectory();
before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  await generateDataset({ lane: loadLane('tool-world-v1', REPO_ROOT), outDir: pristine, seeds: { from: 0, to: 1 } });
});

function copy(): string {
  const dir = temporaryDirectory();
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

const episodes = (dir: string) => join(dir, 'episodes.jsonl');
const rows = (dir: string) => readFileSync(episodes(dir), 'utf8').split('\n').filter(Boolean);
const reasons = (report: Awaited<ReturnType<typeof auditDataset>>) => report.findings.map((finding) => `${finding.check}: ${finding.where}: ${finding.reason}`);

describe('audit', () => {
  it('passes a dataset as generate wrote it, reproducing the sample byte for byte', async () => {
    const report = await auditDataset(pristine, { sample: 10 });
    assert.deepEqual(reasons(report), []);
    assert.equal(report.ok, true);
    assert.equal(report.checks.columnar, 0, 'the Arrow and Parquet copies hold the records of episodes.jsonl');
    assert.equal(report.sampled.length, 10);
    assert.deepEqual(report.sampled, (await auditDataset(pristine, { sample: 10 })).sampled, 'the sample is deterministic');
  });

  it('with full, reproduces every record in file order, and reports where it is', async () => {
    const stages: string[] = [];
    const report = await auditDataset(pristine, { full: true, onProgress: (progress) => stages.push(progress.stage === 'reproduction' ? `reproduction ${progress.done}/${progress.total}` : progress.stage) });
    assert.deepEqual(reasons(report), []);
    assert.equal(report.full, true);
    assert.deepEqual(report.sampled, rows(pristine).map((line) => (JSON.parse(line) as EpisodeRecord).record_id));
    assert.deepEqual(stages.slice(0, 2), ['manifest', 'records']);
    assert.equal(stages.at(-1), `reproduction ${report.records}/${report.records}`);
    await assert.rejects(auditDataset(pristine, { full: true, sample: 3 }), /--full reproduces every record/);
  });

  it('lists at most 1,000 findings of a check and counts the rest', async () => {
    const dir = copy();
    const lines = rows(dir);
    // Copies under new ids whose replay_command still names the original: a provenance finding each.
    const copies = Array.from({ length: 120 }, (_, copy) => lines.map((line) => line.replace(/"record_id":"([^"]+)"/, `"record_id":"$1.copy${copy}"`))).flat();
    writeFileSync(episodes(dir), copies.join('\n') + '\n');
    const report = await auditDataset(dir, { sample: 0 });
    const provenance = report.findings.filter((finding) => finding.check === 'provenance');
    assert.equal(provenance.length, 1001);
    assert.equal(provenance.at(-1)!.reason, `and ${copies.length - 1000} more provenance findings like these, not listed`);
    assert.equal(report.checks.provenance, copies.length);
  });

  it('reproduces on worker threads with the report one thread gives', async () => {
    const dir = copy();
    const lines = rows(dir);
    const record = JSON.parse(lines[2]!) as EpisodeRecord;
    record.messages.at(-1)!.content += ' (edited)';
    lines[2] = JSON.stringify(record);
    writeFileSync(episodes(dir), lines.join('\n') + '\n');
    const one = await auditDataset(dir, { full: true, workers: 1 });
    const two = await auditDataset(dir, { full: true, workers: 2 });
    assert.deepEqual(two, one);
    assert.ok(reasons(one).some((reason) => reason.startsWith(`reproduction: episodes.jsonl:3 (${record.record_id}): regenerate: `)), reasons(one).join('\n'));
  });

  it('catches an edited record: the manifest hash, and the record no longer reproduces', async () => {
    const dir = copy();
    const lines = rows(dir);
    const record = JSON.parse(lines[4]!) as EpisodeRecord;
    record.messages.at(-1)!.content += ' (checked twice)';
    lines[4] = JSON.stringify(record);
    writeFileSync(episodes(dir), lines.join('\n') + '\n');
    const report = await auditDataset(dir, { sample: lines.length });
    assert.equal(report.ok, false);
    assert.ok(reasons(report).some((reason) => /^manifest: episodes\.jsonl: sha256 is .* \(edited after it was written\)$/.test(reason)), reasons(report).join('\n'));
    assert.ok(reasons(report).some((reason) => reason.startsWith(`reproduction: episodes.jsonl:5 (${record.record_id}): regenerate: message `)), reasons(report).join('\n'));
  });

  it('catches a truncated file, naming the file and the line', async () => {
    const dir = copy();
    const text = readFileSync(episodes(dir), 'utf8');
    writeFileSync(episodes(dir), text.slice(0, text.length - 500));
    const report = await auditDataset(dir, { sample: 0 });
    assert.ok(reasons(report).includes(`lines: episodes.jsonl:${rows(pristine).length}: torn last line (no newline: the writer was interrupted)`), reasons(report).join('\n'));
    assert.ok(reasons(report).some((reason) => reason.startsWith('manifest: episodes.jsonl: ') && reason.includes('rows, the manifest says')));
  });

  it('catches added, missing and unlisted files, and a missing manifest', async () => {
    const dir = copy();
    writeFileSync(join(dir, 'notes.txt'), 'hand-written');
    rmSync(join(dir, 'rejected.jsonl'));
    let report = await auditDataset(dir, { sample: 0 });
    assert.ok(reasons(report).includes('manifest: notes.txt: not in the manifest (added after it was written)'));
    assert.ok(reasons(report).includes('manifest: rejected.jsonl: listed in the manifest but missing'));
    rmSync(join(dir, 'manifest.json'));
    report = await auditDataset(dir, { sample: 0 });
    assert.ok(reasons(report).some((reason) => reason.startsWith('manifest: manifest.json: missing')));
  });

  it('catches a repeated id and a source_record_id that resolves nowhere', async () => {
    const dir = copy();
    const lines = rows(dir);
    const derived = JSON.parse(lines[1]!) as EpisodeRecord;
    derived.provenance.lineage.operation = 'dedup';
    derived.provenance.lineage.source_record_id = 'tool-world-v1.elsewhere.s9';
    writeFileSync(episodes(dir), [...lines.slice(0, 1), JSON.stringify(derived), ...lines.slice(2), lines[0]].join('\n') + '\n');
    const report = await auditDataset(dir, { sample: 0 });
    assert.ok(reasons(report).some((reason) => reason.startsWith(`ids: episodes.jsonl:${lines.length + 1}: record_id ${JSON.parse(lines[0]!).record_id} repeats line 1`)), reasons(report).join('\n'));
    assert.ok(reasons(report).some((reason) => reason.includes('source_record_id tool-world-v1.elsewhere.s9 is in neither this dataset nor a parent')), reasons(report).join('\n'));
  });

  it('holds every record to the provenance gate: a model that acted must have a digest', async () => {
    const dir = copy();
    const lines = rows(dir);
    const record = JSON.parse(lines[0]!) as EpisodeRecord;
    record.provenance.actors.push({ role: 'judge', kind: 'model', name: 'qwen2.5:1.5b', version: '1' });
    record.provenance.lineage.replay_command = 'episode-factory replay somewhere';
    lines[0] = JSON.stringify(record);
    writeFileSync(episodes(dir), lines.join('\n') + '\n');
    const report = await auditDataset(dir, { sample: 0 });
    assert.ok(reasons(report).includes('provenance: episodes.jsonl:1: actor qwen2.5:1.5b is a model with no digest'), reasons(report).join('\n'));
    assert.ok(reasons(report).some((reason) => reason.startsWith('provenance: episodes.jsonl:1: replay_command does not name')));
  });

  it('reports a line that is JSON but not a record', async () => {
    const dir = copy();
    appendFileSync(episodes(dir), JSON.stringify({ record_id: 'x' }) + '\n');
    const report = await auditDataset(dir, { sample: 0 });
    assert.ok(reasons(report).some((reason) => reason.startsWith(`lines: episodes.jsonl:${rows(pristine).length + 1}: not a valid record`)), reasons(report).join('\n'));
  });
});
