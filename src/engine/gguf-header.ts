// Owns the first look at a GGUF file, before any parser that trusts it: the
// header walked from the magic to the last tensor entry, with every count and
// length it states checked against what the bytes left in the file can hold
// and against a ceiling no real model comes near, before it is used to loop or
// to allocate. node-llama-cpp's parser and llama.cpp's loop as many times as a
// count says and allocate what a length says: a 124-byte file claiming 2^62
// tensors kept one spinning and growing without end. A file this walk accepts
// can make them do no more work than its own size allows.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { FactoryError } from '../core/errors.js';

/** The ceilings, whatever the file's size: each is far above any published model and low enough that a loader's own quadratic checks stay short. */
export const GGUF_LIMITS = {
  /** Tensor entries (a 405B dense model has about 1,100; a MoE with every expert a tensor, some 13,000). */
  tensors: 32_768,
  /** Metadata key-value pairs (real models have 20 to 60; the vocabulary is one array). */
  keyValues: 8_192,
  /** Bytes of a metadata key: the GGUF specification's own limit. */
  keyBytes: 65_535,
  /** Bytes of a tensor name: llama.cpp's GGML_MAX_NAME is 64 with the terminating zero. */
  tensorNameBytes: 63,
  /** Bytes of one string value (a chat template is a few kilobytes). */
  stringBytes: 16 * 1024 * 1024,
  /** Elements of one array value (the largest vocabularies and merge lists are a few hundred thousand). */
  arrayLength: 1 << 24,
  /** Dimensions of one tensor: llama.cpp's GGML_MAX_DIMS. */
  dimensions: 4,
} as const;

/** GGUF value types, as the specification numbers them (0 to 12). */
const UINT32 = 4;
const STRING = 8;
const ARRAY = 9;
const LAST_VALUE_TYPE = 12;
/** Bytes of each fixed-size value type; STRING and ARRAY have none. */
const VALUE_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/** magic, version, tensor count, key-value count. */
const FIXED_HEADER_BYTES = 24;
/** The least a key-value pair takes: a one-byte key (its length 8, itself 1), its type (4), a one-byte value. */
const SMALLEST_KEY_VALUE = 8 + 1 + 4 + 1;
/** The least a tensor entry takes: an empty name (length 8), no dimensions (4), its type (4), its offset (8). */
const SMALLEST_TENSOR = 8 + 4 + 4 + 8;
/** Bytes read from the file at a time: the header of a real model is a few megabytes, walked in a handful of reads. */
const CHUNK_BYTES = 1 << 20;
const DEFAULT_ALIGNMENT = 32;

export interface GgufHeader {
  version: number;
  tensorCount: number;
  keyValueCount: number;
  /** Where the tensor data begins: after the header, aligned. */
  dataOffset: number;
}

/** What a check is about, for its message; a function when building the text for each of a vocabulary's strings would cost more than the walk. */
type Field = string | (() => string);

function named(field: Field): string {
  return typeof field === 'string' ? field : field();
}

/** Printable and short: a key or a name from a hostile file goes into an error message, never raw into a terminal. */
function shown(bytes: Buffer): string {
  const text = bytes.subarray(0, 64).toString('latin1').replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(bytes.length > 64 ? `${text}...` : text);
}

/** Reads forward through the file, never past its end and never more than the caller has checked fits. */
class HeaderCursor {
  position = 0;
  private window = Buffer.alloc(0);
  private windowStart = 0;

  constructor(
    private readonly path: string,
    private readonly descriptor: number,
    readonly size: number,
  ) {}

  /** Stops the walk: `field` holds `value`, which breaks `bound` (when there is one number to name) for the reason `why`. */
  refuse(field: Field, value: bigint | number, bound: bigint | number | undefined, why: string): never {
    this.stop(`${named(field)} is ${value}${bound === undefined ? '' : `, beyond ${bound}`} (${why})`);
  }

  private stop(problem: string): never {
    throw new FactoryError('model_unavailable', `${this.path} is not a GGUF file the engine will load: ${problem}`, {
      fix: "pass a GGUF model written by llama.cpp's tools or the gguf Python package, whole (scripts/tiny-model.sh builds one)",
    });
  }

  get remaining(): number {
    return this.size - this.position;
  }

  /** `length` more bytes must be in the file for `field`. */
  need(length: number, field: Field): void {
    if (length > this.remaining) this.stop(`${named(field)} takes ${length} bytes at offset ${this.position}, beyond the ${this.remaining} left (the file is cut short at ${this.size} bytes)`);
  }

  /** Moves past the next `length` bytes, which are in the window from the index returned. */
  private take(length: number, field: Field): number {
    this.need(length, field);
    if (this.position < this.windowStart || this.position + length > this.windowStart + this.window.length) {
      this.window = Buffer.alloc(Math.min(Math.max(length, CHUNK_BYTES), this.remaining));
      const read = readSync(this.descriptor, this.window, 0, this.window.length, this.position);
      if (read < length) this.stop(`${named(field)} takes ${length} bytes at offset ${this.position}, and only ${read} could be read (the file changed while it was read)`);
      this.windowStart = this.position;
    }
    const at = this.position - this.windowStart;
    this.position += length;
    return at;
  }

  bytes(length: number, field: Field): Buffer {
    const at = this.take(length, field);
    return this.window.subarray(at, at + length);
  }

  uint32(field: Field): number {
    return this.window.readUInt32LE(this.take(4, field));
  }

  /** A uint64, as a number when it is below 2^32 (every real length), else as a bigint. */
  uint64(field: Field): number | bigint {
    const at = this.take(8, field);
    const high = this.window.readUInt32LE(at + 4);
    return high === 0 ? this.window.readUInt32LE(at) : this.window.readBigUInt64LE(at);
  }

  /** Moves past `length` bytes of a value the walk checks the size of but does not need. */
  passOver(length: number, field: Field): void {
    this.need(length, field);
    this.position += length;
  }

  /** A length or a count read from the file, checked (see `bounded`) before it is used. */
  count(field: Field, ceiling: number, smallest: number, what: string): number {
    return this.bounded(field, this.uint64(field), ceiling, smallest, what);
  }

  /**
   * `value`, read from the file for `field`, if it is at most `ceiling` and at
   * most what the bytes left can hold at `smallest` bytes an item; returned as
   * a number, which it then safely is.
   */
  bounded(field: Field, value: number | bigint, ceiling: number, smallest: number, what: string): number {
    if (value > ceiling) this.refuse(field, value, ceiling, "the engine's limit; no real model comes near it");
    const room = Math.floor(this.remaining / smallest);
    if (value > room) {
      this.refuse(field, value, room, smallest === 1 ? `only ${room} bytes are left after offset ${this.position}` : `the ${this.remaining} bytes left after offset ${this.position} hold at most ${room} ${what}`);
    }
    return Number(value);
  }
}

/**
 * Walks the header of the GGUF file at `path`, checking every count and
 * length before it is used; throws a FactoryError naming the field, its value
 * and the bound it broke. Reads the header only, never the tensor data.
 */
export function readGgufHeader(path: string): GgufHeader {
  const descriptor = openSync(path, 'r');
  try {
    const cursor = new HeaderCursor(path, descriptor, fstatSync(descriptor).size);
    const refuse = cursor.refuse.bind(cursor);
    if (cursor.size < FIXED_HEADER_BYTES) refuse('the file size', cursor.size, undefined, `a GGUF header alone takes ${FIXED_HEADER_BYTES} bytes`);
    const magic = cursor.bytes(4, 'the magic');
    if (magic.toString('latin1') !== 'GGUF') {
      throw new FactoryError('model_unavailable', `${path} is not a GGUF file: it begins with ${shown(magic)}, not "GGUF"`, { fix: 'pass a .gguf model file' });
    }
    const version = cursor.uint32('the version');
    if (version !== 2 && version !== 3) {
      throw new FactoryError('model_unavailable', `${path} is GGUF version ${version}; llama.cpp reads versions 2 and 3 (little-endian)`, { fix: 'convert the model again with a current llama.cpp' });
    }
    const statedTensors = cursor.uint64('tensor_count');
    const statedKeyValues = cursor.uint64('metadata_kv_count');
    const tensorCount = cursor.bounded('tensor_count', statedTensors, GGUF_LIMITS.tensors, SMALLEST_TENSOR, 'tensor entries');
    const keyValueCount = cursor.bounded('metadata_kv_count', statedKeyValues, GGUF_LIMITS.keyValues, SMALLEST_KEY_VALUE, 'key-value pairs');
    // Both lists share the bytes: the pairs must leave room for the tensor entries after them.
    if (keyValueCount * SMALLEST_KEY_VALUE + tensorCount * SMALLEST_TENSOR > cursor.remaining) {
      const room = Math.floor((cursor.remaining - tensorCount * SMALLEST_TENSOR) / SMALLEST_KEY_VALUE);
      refuse('metadata_kv_count', keyValueCount, room, `the ${cursor.remaining} bytes after the counts must also hold ${tensorCount} tensor entries of ${SMALLEST_TENSOR} bytes or more`);
    }
    let alignment = DEFAULT_ALIGNMENT;
    for (let index = 0; index < keyValueCount; index++) {
      const keyLength = cursor.count(`the length of key ${index}`, GGUF_LIMITS.keyBytes, 1, 'bytes');
      if (keyLength === 0) refuse(`the length of key ${index}`, keyLength, undefined, 'a key is never empty');
      const key = cursor.bytes(keyLength, `key ${index}`);
      const name = `key ${index} (${shown(key)})`;
      // llama.cpp copies keys as C strings: one cut short to nothing at a zero byte stops the process.
      if (key.includes(0)) refuse(`the byte at ${key.indexOf(0)} of ${name}`, 0, undefined, 'a key is ASCII text without zero bytes; llama.cpp copies keys as C strings and stops the process on one cut to nothing');
      const type = cursor.uint32(`the type of ${name}`);
      if (key.toString('latin1') === 'general.alignment') {
        if (type !== UINT32) refuse(`the type of ${name}`, type, UINT32, 'general.alignment is a uint32, type 4');
        alignment = cursor.uint32(name);
        if (alignment === 0 || (alignment & (alignment - 1)) !== 0) refuse(name, alignment, undefined, 'an alignment is a power of two');
        continue;
      }
      passOverValue(cursor, type, name);
    }
    for (let index = 0; index < tensorCount; index++) {
      const tensorName = cursor.bytes(cursor.count(`the name length of tensor ${index}`, GGUF_LIMITS.tensorNameBytes, 1, 'bytes'), `the name of tensor ${index}`);
      const name = `tensor ${index} (${shown(tensorName)})`;
      const dimensions = cursor.uint32(`the dimension count of ${name}`);
      if (dimensions > GGUF_LIMITS.dimensions) refuse(`the dimension count of ${name}`, dimensions, GGUF_LIMITS.dimensions, "llama.cpp's GGML_MAX_DIMS");
      let elements = 1n;
      for (let dimension = 0; dimension < dimensions; dimension++) {
        const extent = cursor.uint64(`dimension ${dimension} of ${name}`);
        if (extent > Number.MAX_SAFE_INTEGER) refuse(`dimension ${dimension} of ${name}`, extent, Number.MAX_SAFE_INTEGER, 'the largest count a loader adds up exactly');
        elements *= BigInt(extent);
        if (elements > Number.MAX_SAFE_INTEGER) refuse(`the element count of ${name}`, elements, Number.MAX_SAFE_INTEGER, 'the largest count a loader adds up exactly');
      }
      cursor.passOver(4, `the type of ${name}`);
      const offset = cursor.uint64(`the data offset of ${name}`);
      // The data follows the entries, so no offset within it can reach past the file's end.
      if (offset > cursor.remaining) refuse(`the data offset of ${name}`, offset, cursor.remaining, `the file holds ${cursor.remaining} bytes after this entry`);
    }
    const dataOffset = Math.ceil(cursor.position / alignment) * alignment;
    return { version, tensorCount, keyValueCount, dataOffset };
  } finally {
    closeSync(descriptor);
  }
}

/** Moves past one metadata value of `type`, checking its lengths; arrays hold scalars or strings, never arrays (as llama.cpp reads them). */
function passOverValue(cursor: HeaderCursor, type: number, name: string): void {
  const fixed = VALUE_BYTES[type];
  if (fixed !== undefined) return cursor.passOver(fixed, name);
  if (type === STRING) return cursor.passOver(cursor.count(`the string length of ${name}`, GGUF_LIMITS.stringBytes, 1, 'bytes'), name);
  if (type !== ARRAY) return cursor.refuse(`the type of ${name}`, type, LAST_VALUE_TYPE, 'the last GGUF value type');
  const elementType = cursor.uint32(`the element type of ${name}`);
  if (elementType === ARRAY) return cursor.refuse(`the element type of ${name}`, elementType, undefined, 'an array of arrays, which llama.cpp does not read');
  if (elementType !== STRING && VALUE_BYTES[elementType] === undefined) return cursor.refuse(`the element type of ${name}`, elementType, LAST_VALUE_TYPE, 'the last GGUF value type');
  const elementBytes = VALUE_BYTES[elementType] ?? 8;
  const length = cursor.count(`the array length of ${name}`, GGUF_LIMITS.arrayLength, elementBytes, 'elements');
  if (elementType !== STRING) return cursor.passOver(length * elementBytes, name);
  for (let element = 0; element < length; element++) {
    cursor.passOver(cursor.count(() => `the length of string ${element} of ${name}`, GGUF_LIMITS.stringBytes, 1, 'bytes'), () => `string ${element} of ${name}`);
  }
}
