// The dataset commands against someone who edits a dataset and hopes a later
// command will bless the edit: a line deleted or torn, a manifest entry that
// climbs out of the directory, a manifest removed, a record that is not
// UTF-8, an id that holds two contents, a derived dataset rewritten together
// with its manifest. No command may rewrite the manifest over such files or
// turn them into output that looks verified; each says what differs and
// exits non-zero, and audit still fails afterwards, whatever ran in between.
// `env serve --out` does not take over such a dataset either.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import { EnvironmentDataset } from '../../src/environment/environment-dataset.js';
import { generateDataset } from '../../src/generation/generate-dataset.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { EpisodeRecord } from '../../src/records/episode-record.js';
import type { Manifest } from '../../src/records/manifest.js';
import { REPO_ROOT, runCliWithin, temporaryDirectory, type TimedCliResult } from '../helpers.js';
import { rewriteManifest } from '../fixtures/sealed-dataset.js';

const TIMEOUT = { timeout: 240_000 };
const LIMIT_MS = 90_000;
const pristine = temporaryDirectory('ef-launder-');

before(async () => {
  delete process.env.SOURCE_DATE_EPOCH;
  await generateDataset({ lane: loadLane('tool-world-v1', REPO_ROOT), outDir: pristine, seeds: { from: 0, to: 1 } });
});

function copy(): string {
  const dir = join(temporaryDirectory('ef-launder-'), 'dataset');
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

const episodes = (dir: string) => join(dir, 'episodes.jsonl');
const lines = (dir: string) => readFileSync(episodes(dir), 'utf8').split('\n').filter(Boolean);
const writeLines = (dir: string, all: readonly string[]) => writeFileSync(episodes(dir), all.join('\n') + '\n');

const cli = (dir: string, ...args: string[]) => runCliWithin(LIMIT_MS, dir, ...args);

/** Every command that reads a dataset, each on its own copy of `dir`, as `[name, args]` with DIR for the copy. */
const COMMANDS: [string, string[]][] = [
  ['split', ['split', 'DIR']],
  ['card', ['card', 'DIR', '--license', 'mit']],
  ['export sft', ['export', 'sft', 'DIR']],
  ['export dpo', ['export', 'dpo', 'DIR']],
  ['export sft --out', ['export', 'sft', 'DIR', '--out', 'OUT/sft.jsonl']],
  ['stats', ['stats', 'DIR']],
  ['report', ['report', 'DIR', '--quiet']],
  ['dedup', ['dedup', 'DIR', '--out', 'OUT/dedup', '--quiet']],
];

interface CommandRun {
  name: string;
  dir: string;
  out: string;
  manifestBefore: string;
  result: TimedCliResult;
}

/** Runs every command on its own copy made by `tamper`, two at a time. */
async function runEveryCommand(tamper: (dir: string) => void): Promise<CommandRun[]> {
  const runs: CommandRun[] = [];
  const pending = COMMANDS.map(([name, args]) => async () => {
    const dir = copy();
    tamper(dir);
    const out = temporaryDirectory('ef-launder-out-');
    const manifestBefore = existsSync(join(dir, 'manifest.json')) ? readFileSync(join(dir, 'manifest.json'), 'utf8') : '';
    const result = await cli(REPO_ROOT, ...args.map((arg) => arg.replace('DIR', dir).replace('OUT', out)));
    runs.push({ name, dir, out, manifestBefore, result });
  });
  while (pending.length > 0) await Promise.all(pending.splice(0, 2).map((run) => run()));
  return runs.sort((left, right) => COMMANDS.findIndex(([name]) => name === left.name) - COMMANDS.findIndex(([name]) => name === right.name));
}

function assertRefused(run: CommandRun, pattern: RegExp, status = 1): void {
  assert.equal(run.result.timedOut, false, `${run.name} finished`);
  assert.equal(run.result.status, status, `${run.name} exits ${status}: ${run.result.stderr}`);
  assert.match(run.result.stderr, pattern, `${run.name} says why`);
  const manifestAfter = existsSync(join(run.dir, 'manifest.json')) ? readFileSync(join(run.dir, 'manifest.json'), 'utf8') : '';
  assert.equal(manifestAfter, run.manifestBefore, `${run.name} leaves the manifest as it was`);
}

describe('no command launders an edited dataset', () => {
  it('a deleted line: every command stops naming episodes.jsonl, and audit --full still fails after all of them', TIMEOUT, async () => {
    const runs = await runEveryCommand((dir) => writeLines(dir, lines(dir).filter((_, index) => index !== 2)));
    for (const run of runs) {
      assertRefused(run, /does not match its manifest\.json.*did nothing/);
      assert.match(run.result.stderr, /episodes\.jsonl: sha256 is [0-9a-f]{12}…, the manifest says/, run.name);
      for (const written of ['train.jsonl', 'README.md', 'sft', 'dpo', 'report.html']) assert.ok(!existsSync(join(run.dir, written)), `${run.name} wrote no ${written}`);
      assert.ok(!existsSync(join(run.out, 'sft.jsonl')) && !existsSync(join(run.out, 'dedup')), `${run.name} wrote nothing elsewhere`);
    }
    // The commands did nothing, so the edit is still there to find.
    const audit = await cli(REPO_ROOT, 'audit', runs[0]!.dir, '--full');
    assert.equal(audit.status, 1);
    assert.match(audit.stdout, /FAIL manifest: episodes\.jsonl: sha256 is/);
  });

  it('a torn last line: the same', TIMEOUT, async () => {
    const runs = await runEveryCommand((dir) => {
      const text = readFileSync(episodes(dir), 'utf8');
      writeFileSync(episodes(dir), text.slice(0, text.length - 200));
    });
    for (const run of runs) assertRefused(run, /episodes\.jsonl: sha256 is/);
  });

  it('a manifest entry that climbs out of the directory is an error, never skipped', TIMEOUT, async () => {
    const climb = (dir: string) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
      manifest.files.push({ path: '../../../../etc/passwd', sha256: '0'.repeat(64), bytes: 1, rows: 1 });
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    };
    const runs = await runEveryCommand(climb);
    for (const run of runs) assertRefused(run, /"\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd" climbs out of the dataset directory/);
    const dir = copy();
    climb(dir);
    const audit = await cli(REPO_ROOT, 'audit', dir, '--sample', '0');
    assert.equal(audit.status, 1);
    assert.match(audit.stdout, /FAIL manifest: manifest\.json\/files\/\d+\/path: "\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd" climbs out/);
  });

  it('a removed manifest: commands that write one refuse, commands that only read warn', TIMEOUT, async () => {
    const runs = await runEveryCommand((dir) => rmSync(join(dir, 'manifest.json')));
    for (const run of runs) {
      if (['split', 'card', 'export sft', 'export dpo'].includes(run.name)) {
        assertRefused(run, /has no manifest\.json, so its files cannot be checked and .* did nothing/);
        assert.ok(!existsSync(join(run.dir, 'manifest.json')), `${run.name} wrote no manifest`);
      } else {
        assert.equal(run.result.status, 0, `${run.name}: ${run.result.stderr}`);
        assert.match(run.result.stderr, /warning: .* has no manifest\.json: its files cannot be checked/, run.name);
      }
    }
  });

  it('a file added after the manifest is not read as the dataset\'s own', TIMEOUT, async () => {
    const dir = copy();
    // A forged split: split.json and a train file the card and the exports would read.
    writeFileSync(join(dir, 'split.json'), JSON.stringify({ format: 'episode-factory.split.v1', test_fraction: 0, splits: { train: { path: 'train.jsonl', rows: 1, tasks: [] } } }));
    writeFileSync(join(dir, 'train.jsonl'), lines(dir)[0] + '\n');
    for (const args of [['card', dir, '--license', 'mit'], ['export', 'sft', dir]]) {
      const result = await cli(REPO_ROOT, ...args);
      assert.equal(result.status, 1, result.stderr);
      assert.match(result.stderr, /split\.json: is not in the manifest \(added after it was written\)/);
      assert.match(result.stderr, /train\.jsonl: is not in the manifest/);
    }
  });
});

describe('every dataset command validates records as it reads them', () => {
  /** One record's final answer with an invalid UTF-8 byte in it, the manifest made to agree. */
  function invalidUtf8(dir: string): void {
    const bytes = readFileSync(episodes(dir));
    const at = bytes.indexOf('"content":"', bytes.indexOf('\n', bytes.indexOf('\n') + 1)) + '"content":"'.length;
    bytes[at] = 0xff;
    writeFileSync(episodes(dir), bytes);
    rewriteManifest(dir, 'episodes.jsonl');
  }

  it('invalid UTF-8 is named with its line and byte, and never becomes U+FFFD in an output', TIMEOUT, async () => {
    const runs = await runEveryCommand(invalidUtf8);
    for (const run of runs) {
      assert.equal(run.result.timedOut, false);
      assert.match(run.result.stderr, /episodes\.jsonl:3: not UTF-8 \(invalid byte sequence at byte \d+ of the line\)/, run.name);
      assert.notEqual(run.result.status, 0, `${run.name} exits non-zero`);
      for (const output of [join(run.out, 'sft.jsonl'), join(run.out, 'dedup', 'episodes.jsonl'), join(run.dir, 'sft', 'train.jsonl'), join(run.dir, 'train.jsonl')]) {
        if (existsSync(output)) assert.ok(!readFileSync(output, 'utf8').includes('\uFFFD'), `${run.name}: ${output} has no U+FFFD`);
      }
    }
    for (const run of runs.filter((entry) => ['split', 'card', 'export sft', 'export dpo', 'export sft --out', 'dedup'].includes(entry.name))) {
      assert.equal(run.result.status, 2, `${run.name} refuses an unreadable line (exit 2)`);
    }
  });

  it('a record_id with two contents is tampering (exit 1), wherever it is read', TIMEOUT, async () => {
    let forged = '';
    const runs = await runEveryCommand((dir) => {
      const all = lines(dir);
      const record = JSON.parse(all[1]!) as { messages: { content: string }[] };
      record.messages[record.messages.length - 1]!.content += ' (and one more)';
      forged = JSON.stringify(record);
      writeLines(dir, [...all, forged]);
      rewriteManifest(dir, 'episodes.jsonl');
    });
    for (const run of runs) {
      assert.equal(run.result.status, 1, `${run.name}: ${run.result.stderr}`);
      assert.match(run.result.stderr, /episodes\.jsonl:11: record_id \S+ is also on line 2 with different content/, run.name);
    }
    const sft = runs.find((run) => run.name === 'export sft --out')!;
    assert.ok(!existsSync(join(sft.out, 'sft.jsonl')), 'the altered record was not exported');
    const audit = await cli(REPO_ROOT, 'audit', runs[0]!.dir, '--sample', '0');
    assert.equal(audit.status, 1);
    assert.match(audit.stdout, /FAIL ids: episodes\.jsonl:11: record_id \S+ is also on line 2 with different content/);
  });

  it('an exact copy of a line is an exact duplicate, even of a record dropped as near', TIMEOUT, async () => {
    const dir = copy();
    const all = lines(dir);
    // Line 2 is dropped as a near duplicate of line 1 (the same task on another seed); copy it, and line 4, to the end.
    writeLines(dir, [...all, all[1]!, all[3]!]);
    rewriteManifest(dir, 'episodes.jsonl');
    const out = join(temporaryDirectory('ef-launder-out-'), 'dedup');
    const result = await cli(REPO_ROOT, 'dedup', dir, '--out', out, '--json', '--quiet');
    assert.equal(result.status, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as { by_reason: Record<string, number> };
    const dropped = readFileSync(join(out, 'dropped.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { record_id: string; reason: string });
    const copies = dropped.slice(-2);
    assert.deepEqual(copies.map((row) => row.reason), ['exact', 'exact'], 'both copies are exact');
    assert.equal(summary.by_reason.exact, 2);
  });

  it('stats, report and card exit non-zero on a torn line even with a matching manifest', TIMEOUT, async () => {
    const dir = copy();
    const text = readFileSync(episodes(dir), 'utf8');
    writeFileSync(episodes(dir), text.slice(0, text.length - 200));
    rewriteManifest(dir, 'episodes.jsonl');
    const stats = await cli(REPO_ROOT, 'stats', dir);
    assert.equal(stats.status, 1, stats.stderr);
    assert.match(stats.stderr, /episodes\.jsonl:10: torn last line/);
    const report = await cli(REPO_ROOT, 'report', dir, '--quiet', '--out', join(temporaryDirectory(), 'report.html'));
    assert.equal(report.status, 1, report.stderr);
    const card = await cli(REPO_ROOT, 'card', dir, '--license', 'mit');
    assert.equal(card.status, 2, card.stderr);
    assert.match(card.stderr, /1 unreadable line; nothing was described \(no card was written\)/);
    assert.ok(!existsSync(join(dir, 'README.md')));
  });

  it('a record nested 100,000 levels deep is a problem with its line, not a crash', TIMEOUT, async () => {
    const dir = copy();
    writeLines(dir, [...lines(dir), `{"record_id":${'['.repeat(100_000)}${']'.repeat(100_000)}}`]);
    rewriteManifest(dir, 'episodes.jsonl');
    const stats = await cli(REPO_ROOT, 'stats', dir);
    assert.equal(stats.status, 1, stats.stderr);
    assert.match(stats.stderr, /episodes\.jsonl:11: the line nests deeper than 256 levels/);
    assert.doesNotMatch(stats.stderr, /Maximum call stack/);
    const audit = await cli(REPO_ROOT, 'audit', dir, '--sample', '0');
    assert.equal(audit.status, 1);
    assert.match(audit.stdout, /FAIL lines: episodes\.jsonl:11: the line nests deeper than 256 levels/);
  });
});

describe('a derived dataset names its source exactly', () => {
  it('dedup names the source manifest; audit --parent finds an edited derived record and a changed source', TIMEOUT, async () => {
    const source = copy();
    const out = join(temporaryDirectory('ef-launder-out-'), 'dedup');
    const dedup = await cli(REPO_ROOT, 'dedup', source, '--out', out, '--quiet');
    assert.equal(dedup.status, 0, dedup.stderr);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
    assert.equal(manifest.source_manifest_sha256, createHash('sha256').update(readFileSync(join(source, 'manifest.json'))).digest('hex'));

    const clean = await cli(REPO_ROOT, 'audit', out, '--parent', source, '--sample', '0');
    assert.equal(clean.status, 0, clean.stdout);
    assert.match(clean.stdout, /ids ok, lineage ok/);

    // Edit a derived record's answer and make the derived manifest (and its columnar copies' hashes) agree.
    const edited = join(temporaryDirectory('ef-launder-out-'), 'dedup');
    cpSync(out, edited, { recursive: true });
    const all = lines(edited);
    const record = JSON.parse(all[0]!) as { messages: { content: string }[] };
    record.messages[record.messages.length - 1]!.content += ' Also, all issues are closed.';
    all[0] = JSON.stringify(record);
    writeLines(edited, all);
    rewriteManifest(edited, 'episodes.jsonl');
    const forged = await cli(REPO_ROOT, 'audit', edited, '--parent', source, '--sample', '0');
    assert.equal(forged.status, 1);
    assert.match(forged.stdout, /FAIL lineage: episodes\.jsonl:1 \(\S+\): differs from its source record \S+ with dedup lineage/);

    // The source changes after the fact: the derived manifest no longer names it.
    writeLines(source, lines(source).slice(0, -1));
    rewriteManifest(source, 'episodes.jsonl');
    const moved = await cli(REPO_ROOT, 'audit', out, '--parent', source, '--sample', '0');
    assert.equal(moved.status, 1);
    assert.match(moved.stdout, /FAIL lineage: manifest\.json: source_manifest_sha256 is [0-9a-f]{12}…, but no --parent has that manifest/);
  });
});

describe('env serve --out never takes over an edited dataset', () => {
  it('refuses to reopen a dataset whose records differ from its manifest, and changes nothing', TIMEOUT, () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    const out = join(temporaryDirectory('ef-launder-env-'), 'env');
    const written = EnvironmentDataset.open(out, lane);
    for (const line of lines(pristine).slice(0, 3)) written.append(JSON.parse(line) as EpisodeRecord, line);
    written.close();
    const edits: [string, (dir: string) => void][] = [
      ['a deleted line', (dir) => writeLines(dir, lines(dir).slice(1))],
      ['an edited record', (dir) => writeLines(dir, lines(dir).map((line, index) => (index === 1 ? line.replace('"content":"', '"content":"Plainly, ') : line)))],
      ['two lines added by hand', (dir) => writeLines(dir, [...lines(dir), ...lines(pristine).slice(3, 5)])],
    ];
    for (const [what, edit] of edits) {
      const dir = join(temporaryDirectory('ef-launder-env-'), 'env');
      cpSync(out, dir, { recursive: true });
      edit(dir);
      const files = ['episodes.jsonl', 'manifest.json'].map((file) => readFileSync(join(dir, file), 'utf8'));
      assert.throws(
        () => EnvironmentDataset.open(dir, lane),
        (error: unknown) => error instanceof FactoryError && error.code === 'dataset_tampered' && /episodes\.jsonl (does not match|has 2 whole lines past)/.test(error.message),
        what,
      );
      assert.deepEqual(['episodes.jsonl', 'manifest.json'].map((file) => readFileSync(join(dir, file), 'utf8')), files, `${what}: nothing was changed`);
    }
    // What a kill leaves (one record past the manifest, then a torn line) is still taken up.
    const killed = join(temporaryDirectory('ef-launder-env-'), 'env');
    cpSync(out, killed, { recursive: true });
    writeFileSync(episodes(killed), readFileSync(episodes(killed), 'utf8') + lines(pristine)[3] + '\n' + lines(pristine)[4]!.slice(0, 300));
    const reopened = EnvironmentDataset.open(killed, lane);
    assert.equal(reopened.records, 4);
    reopened.close();
  });
});
