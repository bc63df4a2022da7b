import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { writeColumnar } from '../../src/records/columnar-files.js';
import { REPO_ROOT, temporaryDirectory } from '../helpers.js';

const SAMPLE = join(REPO_ROOT, 'datasets', 'tool-world-faults-v1', 'episodes.jsonl');

describe('a JSONL-only dataset (no columnar outputs asked for)', () => {
  it('counts the rows as a columnar write would, and writes nothing', async () => {
    const out = temporaryDirectory();
    const withArrow = await writeColumnar(SAMPLE, { arrow: join(out, 'e.arrow') }, 16);
    const before = readdirSync(out);
    assert.equal(await writeColumnar(SAMPLE, {}, 16), withArrow);
    assert.deepEqual(readdirSync(out), before);
    writeFileSync(join(out, 'empty.jsonl'), '');
    assert.equal(await writeColumnar(join(out, 'empty.jsonl'), {}), 0);
  });

  it('still refuses a line that is not a record', async () => {
    const out = temporaryDirectory();
    const lines = readFileSync(SAMPLE, 'utf8').split('\n');
    writeFileSync(join(out, 'bad.jsonl'), `${lines[0]}\n{"record_id": "x"\n`);
    await assert.rejects(writeColumnar(join(out, 'bad.jsonl'), {}));
    writeFileSync(join(out, 'bad.jsonl'), `${lines[0]}\n{"record_id": "x"}\n`);
    await assert.rejects(writeColumnar(join(out, 'bad.jsonl'), {}));
  });
});
