// Tests the zip container: same entries give the same bytes, entries read back
// whole (stored and deflated), and bad archives are refused with clear errors.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FactoryError } from '../../../../src/core/errors.js';
import { crc32, readZip, writeZip } from '../../../../src/world/servers/formats/zip-archive.js';

const entries = [
  { name: 'b.txt', data: Buffer.from('hello zip') },
  { name: 'dir/a.xml', data: Buffer.from('<a>ünï</a>'.repeat(50)) },
  { name: 'empty', data: Buffer.alloc(0) },
];

function refused(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => error instanceof FactoryError && pattern.test(error.message));
}

describe('zip archive', () => {
  it('computes the standard CRC-32', () => {
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
    assert.equal(crc32(Buffer.alloc(0)), 0);
  });

  it('writes the same bytes for the same entries, with 1980-01-01 times', () => {
    const first = writeZip(entries);
    assert.deepEqual(first, writeZip(entries.map((entry) => ({ ...entry, data: Buffer.from(entry.data) }))));
    assert.equal(first.readUInt16LE(10), 0); // DOS time
    assert.equal(first.readUInt16LE(12), 0x21); // DOS date 1980-01-01
  });

  it('reads back stored and deflated entries in the order written', () => {
    for (const compression of ['store', 'deflate'] as const) {
      const read = readZip(writeZip(entries, compression));
      assert.deepEqual(read.map((entry) => entry.name), ['b.txt', 'dir/a.xml', 'empty']);
      read.forEach((entry, index) => assert.deepEqual(entry.data, entries[index]!.data));
    }
    assert.ok(writeZip(entries, 'deflate').length < writeZip(entries, 'store').length);
  });

  it('refuses names that climb out or are absolute, when writing and reading', () => {
    for (const name of ['../evil', 'a/../../b', '/etc/passwd', 'C:/x', '\\share']) {
      refused(() => writeZip([{ name, data: Buffer.from('x') }]), /absolute, empty or climbs out/);
      // The same archive with a safe name of the same length, renamed in the bytes.
      const safe = 'x'.repeat(name.length);
      const bytes = writeZip([{ name: safe, data: Buffer.from('x') }]);
      const patched = Buffer.from(bytes.toString('latin1').split(safe).join(name), 'latin1');
      refused(() => readZip(patched), /climbs out/);
    }
  });

  it('refuses archives over the entry and size bounds', () => {
    const many = Array.from({ length: 11 }, (_, index) => ({ name: `f${index}`, data: Buffer.from('x') }));
    refused(() => readZip(writeZip(many), { maxEntries: 10, maxTotalBytes: 1000 }), /11 entries is over the limit of 10/);
    refused(() => readZip(writeZip([{ name: 'big', data: Buffer.alloc(2000) }], 'deflate'), { maxEntries: 10, maxTotalBytes: 1000 }), /more than the limit of 1000 bytes/);
    // A header that understates the unpacked size cannot slip past the bound.
    const bomb = writeZip([{ name: 'big', data: Buffer.alloc(5000) }], 'deflate');
    const end = bomb.length - 22;
    const central = bomb.readUInt32LE(end + 16);
    bomb.writeUInt32LE(10, central + 24);
    refused(() => readZip(bomb), /does not inflate|unpacks to/);
  });

  it('refuses what is not a zip, and corrupted data', () => {
    refused(() => readZip(Buffer.from('not a zip at all, just some text here')), /not a zip file/);
    const bytes = writeZip([{ name: 'a', data: Buffer.from('abcdef') }]);
    bytes[30 + 1 + 2] = bytes[30 + 1 + 2]! ^ 0xff; // a byte of the stored data
    refused(() => readZip(bytes), /fails its CRC check/);
  });
});
