// Hostile: GGUF files crafted to make a loader loop or allocate without end,
// given to `engine` as a user would, each child under a hard kill timer. A
// header's counts and lengths are the file's own word; before this check a
// 124-byte file claiming 2^62 tensors and key-value pairs kept the process
// spinning and growing, and a key cut to nothing by a zero byte stopped it with
// llama.cpp's abort (SIGABRT).
// What must hold: every such file is a clean exit 2 naming the field, its
// value and the bound it broke, and a well-formed file still reaches llama.cpp.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readGgufHeader } from '../../src/engine/gguf-header.js';
import { runCliWithin, runWithin, temporaryDirectory } from '../helpers.js';

const TSX = import.meta.resolve('tsx');
const MUTATIONS = fileURLToPath(new URL('../fixtures/gguf-mutations.ts', import.meta.url));

/** Far longer than a clean refusal takes (under a second, plus Node's start); a loop without end is killed here. */
const LIMIT_MS = 15_000;
const HUGE = 2n ** 62n;

const uint32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
};
const uint64 = (value: bigint | number) => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt(value));
  return bytes;
};
/** A GGUF string: its length (as stated, which may lie) and its bytes. */
const text = (value: string, statedLength: bigint | number = Buffer.byteLength(value)) => Buffer.concat([uint64(statedLength), Buffer.from(value)]);
const header = (tensors: bigint | number, keyValues: bigint | number, version = 3) => Buffer.concat([Buffer.from('GGUF'), uint32(version), uint64(tensors), uint64(keyValues)]);
const STRING = 8;
const ARRAY = 9;

/** Two float32 tensors of 4x3 and 4, the second at offset 64. */
const TENSOR_DATA_BYTES = 64 + 16;

/** A well-formed GGUF v3 file: string, scalar and array values, a custom alignment, two tensors with their data. */
function wellFormed(): Buffer {
  return wellFormedParts().bytes;
}

/**
 * The same, and where its tensor entries begin; `nameKey` and `alignment`
 * replace the key of its second pair and its general.alignment pair, for a
 * file that is whole but for one flaw.
 */
function wellFormedParts(nameKey = 'general.name', alignmentPair = Buffer.concat([uint32(4), uint32(64)])): { bytes: Buffer; tensorsAt: number } {
  const alignment = 64;
  const keyValues = Buffer.concat([
    text('general.architecture'), uint32(STRING), text('qwen2'),
    text(nameKey), uint32(STRING), text('crafted'),
    text('tokenizer.ggml.tokens'), uint32(ARRAY), uint32(STRING), uint64(3), text('a'), text('b'), text('<|im_start|>'),
    text('tokenizer.ggml.token_type'), uint32(ARRAY), uint32(5), uint64(3), uint32(1), uint32(1), uint32(3),
    text('general.alignment'), alignmentPair,
  ]);
  const tensors = Buffer.concat([
    text('token_embd.weight'), uint32(2), uint64(4), uint64(3), uint32(0), uint64(0),
    text('output_norm.weight'), uint32(1), uint64(4), uint32(0), uint64(64),
  ]);
  const head = Buffer.concat([header(2, 5), keyValues, tensors]);
  const padding = Buffer.alloc((alignment - (head.length % alignment)) % alignment);
  return { bytes: Buffer.concat([head, padding, Buffer.alloc(TENSOR_DATA_BYTES)]), tensorsAt: 24 + keyValues.length };
}

/** The issue's file: valid magic, version 3, tensor and key-value counts of 2^62, one real pair, zeros to 124 bytes. */
function issueFile(): Buffer {
  const start = Buffer.concat([header(HUGE, HUGE), text('general.architecture'), uint32(STRING), text('qwen2')]);
  return Buffer.concat([start, Buffer.alloc(124 - start.length)]);
}

const CRAFTED: { name: string; bytes: () => Buffer; names: RegExp }[] = [
  { name: 'tensor and key-value counts of 2^62 (the issue\'s 124 bytes)', bytes: issueFile, names: /tensor_count is 4611686018427387904, beyond 32768 \(the engine's limit/ },
  {
    name: 'an array length of 2^62',
    bytes: () => Buffer.concat([header(0, 1), text('tokenizer.ggml.tokens'), uint32(ARRAY), uint32(STRING), uint64(HUGE), text('a')]),
    names: /the array length of key 0 \("tokenizer\.ggml\.tokens"\) is 4611686018427387904, beyond 16777216/,
  },
  {
    name: 'an array of numbers longer than the bytes left',
    bytes: () => Buffer.concat([header(0, 1), text('tokenizer.ggml.scores'), uint32(ARRAY), uint32(6), uint64(1_000_000), Buffer.alloc(40)]),
    names: /the array length of key 0 \("tokenizer\.ggml\.scores"\) is 1000000, beyond 10 \(the 40 bytes left after offset \d+ hold at most 10 elements\)/,
  },
  {
    name: 'a string value of 2^62 bytes',
    bytes: () => Buffer.concat([header(0, 1), text('general.name'), uint32(STRING), text('x', HUGE)]),
    names: /the string length of key 0 \("general\.name"\) is 4611686018427387904, beyond 16777216/,
  },
  {
    name: 'a key of 2^62 bytes',
    bytes: () => Buffer.concat([header(0, 1), text('general.architecture', HUGE), uint32(STRING), text('qwen2')]),
    names: /the length of key 0 is 4611686018427387904, beyond 65535/,
  },
  {
    name: 'a string in an array of 2^40 bytes',
    bytes: () => Buffer.concat([header(0, 1), text('tokenizer.ggml.tokens'), uint32(ARRAY), uint32(STRING), uint64(2), text('a'), text('b', 2n ** 40n)]),
    names: /the length of string 1 of key 0 \("tokenizer\.ggml\.tokens"\) is 1099511627776, beyond 16777216/,
  },
  {
    name: 'counts within the ceilings that the file\'s bytes cannot hold',
    bytes: () => Buffer.concat([header(1000, 3), text('general.architecture'), uint32(STRING), text('qwen2')]),
    names: /tensor_count is 1000, beyond 1 \(the 45 bytes left after offset 24 hold at most 1 tensor entries\)/,
  },
  {
    name: 'more key-value pairs than the file holds once the tensor entries have their room',
    bytes: () => Buffer.concat([header(2, 3), text('general.architecture'), uint32(STRING), text('qwen2'), Buffer.alloc(10)]),
    names: /metadata_kv_count is 3, beyond 0 \(the 55 bytes after the counts must also hold 2 tensor entries of 24 bytes or more\)/,
  },
  {
    name: 'a file cut short inside a value',
    bytes: () => Buffer.concat([header(0, 2), text('general.architecture'), uint32(STRING), text('qwen2'), text('general.name'), uint32(STRING), text('crafted').subarray(0, 11)]),
    names: /the string length of key 1 \("general\.name"\) is 7, beyond 3 \(only 3 bytes are left after offset 101\)/,
  },
  {
    name: 'a file cut short inside the tensor entries',
    bytes: () => {
      const { bytes, tensorsAt } = wellFormedParts();
      return bytes.subarray(0, tensorsAt + 10);
    },
    names: /the name length of tensor 0 is 17, beyond 2 \(only 2 bytes are left after offset \d+\)/,
  },
  {
    name: 'an empty key in an otherwise whole file',
    bytes: () => wellFormedParts('').bytes,
    names: /the length of key 1 is 0 \(a key is never empty/,
  },
  {
    name: 'a key that a zero byte cuts to nothing, in an otherwise whole file (llama.cpp aborted the process on it)',
    bytes: () => wellFormedParts('\0eneral.name').bytes,
    names: /the byte at 0 of key 1 \("\?eneral\.name"\) is 0 \(a key is ASCII text without zero bytes/,
  },
  {
    name: 'general.alignment a uint64, in an otherwise whole file',
    bytes: () => wellFormedParts('general.name', Buffer.concat([uint32(10), uint64(64)])).bytes,
    names: /the type of key 4 \("general\.alignment"\) is 10, beyond 4 \(general\.alignment is a uint32, type 4\)/,
  },
  {
    name: 'a tensor with 2^32-1 dimensions',
    bytes: () => Buffer.concat([header(1, 0), text('token_embd.weight'), uint32(0xffffffff), Buffer.alloc(64)]),
    names: /the dimension count of tensor 0 \("token_embd\.weight"\) is 4294967295, beyond 4/,
  },
  {
    name: 'an array of arrays',
    bytes: () => Buffer.concat([header(0, 1), text('nested'), uint32(ARRAY), uint32(ARRAY), uint64(HUGE), Buffer.alloc(32)]),
    names: /the element type of key 0 \("nested"\) is 9 \(an array of arrays/,
  },
];

describe('hostile: crafted GGUF headers given to engine', () => {
  for (const crafted of CRAFTED) {
    it(`${crafted.name}: a clean exit 2 naming the field, its value and the bound`, { timeout: LIMIT_MS + 10_000 }, async () => {
      const directory = temporaryDirectory('ef-hostile-gguf-');
      const file = join(directory, 'crafted.gguf');
      writeFileSync(file, crafted.bytes());
      const run = await runCliWithin(LIMIT_MS, directory, 'engine', file, '--port', '0');
      assert.equal(run.timedOut, false, `still running after ${run.seconds.toFixed(1)}s, killed; stderr: ${run.stderr.slice(-2000)}`);
      assert.equal(run.status, 2, `exit ${run.status}; stderr: ${run.stderr.slice(-2000)}`);
      assert.match(run.stderr, /is not a GGUF file the engine will load: /);
      assert.match(run.stderr, crafted.names);
      assert.match(run.stderr, / — fix: /);
      assert.doesNotMatch(run.stderr, /^llama\.cpp: |llama\.cpp could not load|GGML_ASSERT/m, 'refused before node-llama-cpp or llama.cpp saw the file');
    });
  }

  it('a well-formed file passes the header check and reaches llama.cpp', { timeout: 90_000 }, async () => {
    const directory = temporaryDirectory('ef-hostile-gguf-');
    const file = join(directory, 'well-formed.gguf');
    writeFileSync(file, wellFormed());
    assert.deepEqual(readGgufHeader(file), { version: 3, tensorCount: 2, keyValueCount: 5, dataOffset: wellFormed().length - TENSOR_DATA_BYTES });
    const run = await runCliWithin(60_000, directory, 'engine', file, '--port', '0');
    assert.equal(run.timedOut, false, `killed; stderr: ${run.stderr.slice(-2000)}`);
    assert.equal(run.status, 2);
    // It has no weights for a qwen2 model: llama.cpp, not the header check, is what turns it down.
    assert.match(run.stderr, /llama\.cpp could not load .*well-formed\.gguf/);
    assert.doesNotMatch(run.stderr, /is not a GGUF file/);
  });

  it('every byte-level mutation of a well-formed header is read through or refused with a FactoryError', { timeout: 90_000 }, async () => {
    const directory = temporaryDirectory('ef-hostile-gguf-');
    const file = join(directory, 'well-formed.gguf');
    writeFileSync(file, wellFormed());
    const run = await runWithin(60_000, process.execPath, ['--import', TSX, MUTATIONS, file, '1500', '20251204'], { cwd: directory, env: process.env });
    assert.equal(run.timedOut, false, `still walking after ${run.seconds.toFixed(1)}s, killed`);
    assert.equal(run.status, 0, run.stderr);
    const outcome = JSON.parse(run.stdout) as { read: number; refused: number; other: string[] };
    assert.deepEqual(outcome.other, []);
    assert.ok(outcome.read > 0 && outcome.refused > 0, run.stdout);
  });
});
