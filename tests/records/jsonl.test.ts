import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JsonlAppender, readJsonl } from '../../src/records/jsonl.js';
import { temporaryDirectory } from '../helpers.js';

describe('JSONL files', () => {
  it('writes one line per row, readable while still open', async () => {
    const path = join(temporaryDirectory(), 'rows.jsonl');
    const appender = new JsonlAppender(path);
    appender.append({ a: 1 });
    appender.append({ b: 2 }, '{"b":2}');
    assert.equal(readFileSync(path, 'utf8'), '{"a":1}\n{"b":2}\n');
    appender.close();
    assert.equal(appender.rows, 2);
    assert.throws(() => appender.append({}), /after close/);
  });

  it('with flush "close", writes every row at once when closed, the same bytes as line by line', () => {
    const directory = temporaryDirectory();
    const eager = new JsonlAppender(join(directory, 'eager.jsonl'));
    const late = new JsonlAppender(join(directory, 'late.jsonl'), 'truncate', { flush: 'close' });
    for (const row of [{ a: 1 }, { b: 'two' }, { c: [3] }]) {
      eager.append(row);
      late.append(row);
    }
    assert.equal(readFileSync(join(directory, 'late.jsonl'), 'utf8'), '', 'nothing written before close');
    assert.equal(late.rows, 3);
    eager.close();
    late.close();
    assert.equal(readFileSync(join(directory, 'late.jsonl'), 'utf8'), readFileSync(join(directory, 'eager.jsonl'), 'utf8'));
    const empty = new JsonlAppender(join(directory, 'empty.jsonl'), 'truncate', { flush: 'close' });
    empty.close();
    assert.equal(readFileSync(join(directory, 'empty.jsonl'), 'utf8'), '');
  });

  it('refuses a serialized row with a newline in it', () => {
    const appender = new JsonlAppender(join(temporaryDirectory(), 'rows.jsonl'));
    assert.throws(() => appender.append(null, '{"a":\n1}'), /must not contain a newline/);
    appender.close();
  });

  it('reports corrupt lines and a torn last line by number, and keeps every good row', async () => {
    const path = join(temporaryDirectory(), 'rows.jsonl');
    writeFileSync(path, '{"a":1}\nnot json\n\n{"b":2}\n');
    appendFileSync(path, '{"c":3, "d":');
    const { rows, problems } = await readJsonl(path);
    assert.deepEqual(rows.map((row) => [row.line, row.value]), [[1, { a: 1 }], [4, { b: 2 }]]);
    assert.deepEqual(problems.map((problem) => problem.line), [2, 3, 5]);
    assert.match(problems[0]!.reason, /not valid JSON/);
    assert.equal(problems[1]!.reason, 'blank line');
    assert.match(problems[2]!.reason, /torn last line/);
  });

  it('reads large files in chunks without splitting lines', async () => {
    const path = join(temporaryDirectory(), 'big.jsonl');
    const appender = new JsonlAppender(path);
    const text = 'é'.repeat(5000);
    for (let index = 0; index < 600; index++) appender.append({ index, text });
    appender.close();
    const { rows, problems } = await readJsonl<{ index: number; text: string }>(path);
    assert.equal(problems.length, 0);
    assert.equal(rows.length, 600);
    assert.ok(rows.every((row, index) => row.value.index === index && row.value.text === text));
  });
});
