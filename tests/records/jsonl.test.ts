import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type JsonlLine, JsonlAppender, readJsonl, readLines } from '../../src/records/jsonl.js';
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

  it('gives every line, its place and its bytes, whatever chunks it falls across', async () => {
    const path = join(temporaryDirectory(), 'lines.jsonl');
    const MiB = 1 << 20;
    // Lengths around the 1 MiB read: lines inside one chunk, across two, across three, one of exactly a chunk, an empty one.
    const lengths = [10, MiB - 20, 5, 2.5 * MiB, 0, MiB, 3, MiB + 1, 70_000, 1];
    // Each line `length` bytes, a two-byte character first (so a cut inside a character would show).
    const lines = lengths.map((length) => (length < 2 ? 'x'.repeat(length) : `é${'x'.repeat(length - 2)}`));
    // A line not UTF-8, whose bad byte is past a chunk's end; then a torn last line that spans a chunk.
    const badLine = Buffer.concat([Buffer.from('a'.repeat(MiB - 3)), Buffer.from([0xc3, 0x28]), Buffer.from('tail')]);
    const file = Buffer.concat([Buffer.from(lines.map((line) => `${line}\n`).join('')), badLine, Buffer.from('\n'), Buffer.from('t'.repeat(MiB + 5))]);
    writeFileSync(path, file);
    const read: JsonlLine[] = [];
    for await (const line of readLines(path)) read.push(line);
    assert.equal(read.length, lines.length + 2);
    let offset = 0;
    lines.forEach((line, index) => {
      const entry = read[index]!;
      assert.equal(entry.text, line, `line ${index + 1}`);
      assert.equal(entry.offset, offset);
      assert.equal(entry.bytes, Buffer.byteLength(line));
      assert.equal(entry.terminated, true);
      offset += entry.bytes + 1;
    });
    const bad = read[lines.length]!;
    assert.equal(bad.invalidUtf8At, MiB - 3, 'the first bad byte, counted from the line start');
    assert.equal(bad.offset, offset);
    const torn = read[lines.length + 1]!;
    assert.deepEqual([torn.terminated, torn.bytes, torn.text.length], [false, MiB + 5, MiB + 5]);

    // Past the line limit, a line is skipped to its newline, and the lines after it are read as before.
    const limited: JsonlLine[] = [];
    for await (const line of readLines(path, { maxLineBytes: MiB })) limited.push(line);
    const sizes = [...lines.map((line) => Buffer.byteLength(line)), badLine.length, MiB + 5];
    assert.deepEqual(limited.map((line) => line.oversized !== undefined), sizes.map((size) => size > MiB));
    assert.ok(sizes.filter((size) => size > MiB).length >= 3 && sizes.filter((size) => size <= MiB && size > MiB / 2).length >= 1, 'lines on both sides of the limit');
    assert.deepEqual(limited.map((line) => line.bytes), read.map((line) => line.bytes), 'every line keeps its place and size');
    assert.equal(limited[4]!.text, lines[4]);

    // From a line's start: the lines from there on, numbered from 1.
    const from: JsonlLine[] = [];
    for await (const line of readLines(path, { start: read[3]!.offset })) from.push(line);
    assert.equal(from.length, read.length - 3);
    assert.equal(from[0]!.text, lines[3]);
    assert.equal(from[1]!.offset, read[4]!.offset);
  });
});

