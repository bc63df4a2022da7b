// The `dedup` command wired into a commander program the way main.ts wires
// every command, with captured output streams.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { Command, CommanderError } from 'commander';
import { registerDedup } from '../../src/cli/dedup-command.js';
import { reportError, type Streams } from '../../src/cli/output.js';
import { isHelpOrVersion, reportUsageErrorsInProjectStyle } from '../../src/cli/usage-errors.js';
import { dedupDataset } from '../../src/dataset/dedup.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-v1');

async function run(...argv: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const streams: Streams = { stdout: sink((text) => (stdout += text)), stderr: sink((text) => (stderr += text)) };
  let status = 0;
  const program = new Command('episode-factory').configureOutput({ writeOut: (text) => streams.stdout.write(text), writeErr: (text) => streams.stderr.write(text) });
  registerDedup(program, streams, (value) => (status = value));
  reportUsageErrorsInProjectStyle(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    status = error instanceof CommanderError && isHelpOrVersion(error) ? 0 : reportError(error, streams);
  }
  return { status, stdout, stderr };
}

describe('episode-factory dedup', () => {
  const work = temporaryDirectory('ef-dedup-cli-');

  it('prints one line with the counts per reason and exits 0', async () => {
    const expected = await dedupDataset({ dir: SAMPLE, outDir: join(work, 'library') });
    assert.ok(expected.dropped > 0);
    const out = join(work, 'plain');
    const result = await run('dedup', SAMPLE, '--out', out);
    assert.equal(result.status, 0, result.stderr);
    const { records, kept, dropped, by_reason: reasons } = expected;
    assert.match(
      result.stdout,
      new RegExp(
        `^dedup ${SAMPLE}: ${records} records, ${kept} kept, ${dropped} dropped \\(exact ${reasons.exact}, near ${reasons.near}, semantic 0\\); ` +
          `near jaccard >= 0\\.9 \\(12x10 bands\\), wall \\d+\\.\\d\\ds -> ${out}\\n$`,
      ),
    );
    assert.ok(readFileSync(join(out, 'episodes.jsonl')).equals(readFileSync(join(work, 'library', 'episodes.jsonl'))));
  });

  it('prints the summary as JSON, and honours --near and --no-near', async () => {
    const near = await run('dedup', SAMPLE, '--out', join(work, 'json'), '--near', '0.7', '--json');
    assert.equal(near.status, 0, near.stderr);
    const summary = JSON.parse(near.stdout) as { near_threshold: number; dropped: number; near_banding: { bands: number; rows: number } };
    assert.equal(summary.near_threshold, 0.7);
    assert.deepEqual(summary.near_banding, { bands: 32, rows: 4 });
    assert.ok(summary.dropped > 1);
    const off = await run('dedup', SAMPLE, '--out', join(work, 'off'), '--no-near');
    assert.match(off.stdout, /: (\d+) records, \1 kept, 0 dropped .*; near off, wall/, 'the sample has no identical trajectories');
  });

  it('rejects bad flags with exit 2 and a fix', async () => {
    const badNear = await run('dedup', SAMPLE, '--out', join(work, 'bad'), '--near', '1.5');
    assert.equal(badNear.status, 2);
    assert.match(badNear.stderr, /--near takes a number in \(0, 1\]/);
    const missingOut = await run('dedup', SAMPLE);
    assert.equal(missingOut.status, 2);
    assert.match(missingOut.stderr, /^episode-factory dedup: required option --out <dir> is missing — fix: pass --out <dir> \(where to write/);
    const provider = await run('dedup', SAMPLE, '--out', join(work, 'provider'), '--embed', 'cohere:embed-v4');
    assert.equal(provider.status, 2);
    assert.match(provider.stderr, /--embed cohere:embed-v4 is not a provider:model pair .* — fix: write --embed ollama:<model> .* or --embed openai:<model> with --base-url/);
    const down = await run('dedup', SAMPLE, '--out', join(work, 'down'), '--embed', 'openai:text-embedding-3', '--base-url', 'http://127.0.0.1:9/v1');
    assert.equal(down.status, 2);
    assert.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:9\/v1\/models .* — fix: start the server, or point --base-url/);
    const stray = await run('dedup', SAMPLE, '--out', join(work, 'stray'), '--embed', 'ollama:nomic-embed-text', '--base-url', 'http://127.0.0.1:9/v1');
    assert.equal(stray.status, 2);
    assert.match(stray.stderr, /--base-url applies to --embed openai:<model>/);
    const host = await run('dedup', SAMPLE, '--out', join(work, 'host'), '--ollama-host', 'http://127.0.0.1:1');
    assert.equal(host.status, 2);
    assert.match(host.stderr, /--ollama-host was given without --embed/);
    const same = await run('dedup', SAMPLE, '--out', SAMPLE);
    assert.equal(same.status, 2);
    assert.match(same.stderr, /is the source dataset; dedup never overwrites its input — fix: pass a new directory/);
    assert.equal(existsSync(join(work, 'bad')), false);
  });

  it('explains itself in --help', async () => {
    const result = await run('dedup', '--help');
    assert.equal(result.status, 0);
    for (const flag of ['--out <dir>', '--near <jaccard>', '--no-near', '--embed <provider:model>', '--cosine <x>', '--ollama-host <url>', '--json']) {
      assert.ok(result.stdout.includes(flag), flag);
    }
    assert.match(result.stdout, /dropped\.jsonl/);
  });
});
