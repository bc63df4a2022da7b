// Every lane's output, pinned: `generate <lane> --seeds 0..1` must write the
// very bytes the fixture names, for every lane under lanes/. A change of shape
// (moving code, one interface instead of six classes) must leave them all as
// they were; a change of behaviour shows here lane by lane, and is pinned
// again on purpose (the message says how).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCliAsync, temporaryDirectory } from '../helpers.js';

interface Pinned {
  episodes_sha256: string;
  rejected_sha256: string;
  records: number;
}

const FIXTURE = join(REPO_ROOT, 'tests', 'fixtures', 'lane-outputs.json');
const pins = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { seeds: string; lanes: Record<string, Pinned> };
const laneNames = readdirSync(join(REPO_ROOT, 'lanes'))
  .filter((name) => name.endsWith('.json'))
  .map((name) => name.slice(0, -'.json'.length))
  .sort();

const sha256 = (path: string) => createHash('sha256').update(existsSync(path) ? readFileSync(path) : '').digest('hex');

describe('every lane\'s output', () => {
  it('pins every lane under lanes/, and only those', () => {
    assert.deepEqual(Object.keys(pins.lanes).sort(), laneNames, `add the new lane to ${FIXTURE} (the digests its generate --seeds ${pins.seeds} writes)`);
  });

  const work = temporaryDirectory('ef-lane-outputs-');
  for (const lane of laneNames) {
    it(`${lane}: generate --seeds ${pins.seeds} writes the pinned bytes`, async () => {
      const out = join(work, lane);
      const result = await runCliAsync(REPO_ROOT, 'generate', lane, '--seeds', pins.seeds, '--out', out);
      assert.equal(result.status, 0, result.stderr);
      const written: Pinned = {
        episodes_sha256: sha256(join(out, 'episodes.jsonl')),
        rejected_sha256: sha256(join(out, 'rejected.jsonl')),
        records: readFileSync(join(out, 'episodes.jsonl'), 'utf8').split('\n').filter((line) => line !== '').length,
      };
      assert.deepEqual(written, pins.lanes[lane], `${lane} no longer writes the pinned bytes; if the change of behaviour is meant, pin what it writes now in ${FIXTURE}`);
    });
  }
});
