// Owns the zip container the binary file formats are packed in: writing a zip
// whose bytes depend only on its entries (fixed 1980-01-01 times, no extra
// fields, the entries in the order given) and reading one back within bounds,
// so a file a server wrote cannot exhaust memory or name a path outside the
// archive.

import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { FactoryError } from '../../../core/errors.js';

export interface ZipEntry {
  /** A relative path with `/` separators. */
  name: string;
  data: Buffer;
}

export type ZipCompression = 'store' | 'deflate';

export interface ZipLimits {
  maxEntries: number;
  maxTotalBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 10_000, maxTotalBytes: 64 * 1024 * 1024 };

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const METHOD_STORE = 0;
const METHOD_DEFLATE = 8;
const FLAG_UTF8_NAMES = 0x0800;
const FLAG_ENCRYPTED = 0x0001;
// MS-DOS time 00:00:00 and date 1980-01-01, the earliest a zip can say: no clock reaches the bytes.
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC-32 (IEEE 802.3, the zip one) of `data`. */
export function crc32(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = CRC_TABLE[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function corrupt(message: string): FactoryError {
  return new FactoryError('server_failed', `zip archive: ${message}`, { fix: 'the file is not a zip this reader accepts; recreate it (the seed writes one) or check what the server wrote' });
}

/** Refuses a name that could leave the archive's directory when unpacked, or that is not a plain relative path. */
function checkEntryName(name: string): void {
  const segments = name.split(/[\\/]/);
  if (name === '' || name.startsWith('/') || name.startsWith('\\') || /^[A-Za-z]:/.test(name) || segments.includes('..') || name.includes('\0')) {
    throw corrupt(`entry name ${JSON.stringify(name)} is absolute, empty or climbs out with ".."`);
  }
}

/** The zip of `entries` in the order given; the same entries always give the same bytes. */
export function writeZip(entries: readonly ZipEntry[], compression: ZipCompression = 'store'): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  const seen = new Set<string>();
  let offset = 0;
  for (const entry of entries) {
    checkEntryName(entry.name);
    if (seen.has(entry.name)) throw new FactoryError('definition_invalid', `zip archive: entry ${JSON.stringify(entry.name)} given twice`, { fix: 'give each entry a distinct name' });
    seen.add(entry.name);
    const name = Buffer.from(entry.name, 'utf8');
    const method = compression === 'deflate' ? METHOD_DEFLATE : METHOD_STORE;
    const body = method === METHOD_DEFLATE ? deflateRawSync(entry.data, { level: 9 }) : entry.data;
    const crc = crc32(entry.data);
    const versionNeeded = method === METHOD_DEFLATE ? 20 : 10;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_HEADER, 0);
    local.writeUInt16LE(versionNeeded, 4);
    local.writeUInt16LE(FLAG_UTF8_NAMES, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    parts.push(local, name, body);

    const header = Buffer.alloc(46);
    header.writeUInt32LE(CENTRAL_HEADER, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(versionNeeded, 6);
    header.writeUInt16LE(FLAG_UTF8_NAMES, 8);
    header.writeUInt16LE(method, 10);
    header.writeUInt16LE(DOS_TIME, 12);
    header.writeUInt16LE(DOS_DATE, 14);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(body.length, 20);
    header.writeUInt32LE(entry.data.length, 24);
    header.writeUInt16LE(name.length, 28);
    // extra, comment, disk number, internal and external attributes stay 0
    header.writeUInt32LE(offset, 42);
    central.push(header, name);

    offset += local.length + name.length + body.length;
  }
  const centralBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, centralBytes, end]);
}

function findEndOfCentralDirectory(bytes: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65,535.
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  for (let at = bytes.length - 22; at >= lowest; at--) {
    if (bytes.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw corrupt('no end-of-central-directory record (not a zip file)');
}

/**
 * The entries of the zip `bytes` in central-directory order, each checked
 * against its CRC. Stored and deflated entries only; refuses more than
 * `limits.maxEntries` entries or more than `limits.maxTotalBytes` unpacked.
 */
export function readZip(bytes: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipEntry[] {
  if (bytes.length < 22) throw corrupt(`${bytes.length} bytes is too short for a zip`);
  const end = findEndOfCentralDirectory(bytes);
  const count = bytes.readUInt16LE(end + 10);
  const centralSize = bytes.readUInt32LE(end + 12);
  const centralOffset = bytes.readUInt32LE(end + 16);
  if (count === 0xffff || centralOffset === 0xffffffff) throw corrupt('zip64 archives are not supported');
  if (count > limits.maxEntries) throw corrupt(`${count} entries is over the limit of ${limits.maxEntries}`);
  if (centralOffset + centralSize > end) throw corrupt('the central directory lies outside the file');

  const entries: ZipEntry[] = [];
  const seen = new Set<string>();
  let total = 0;
  let at = centralOffset;
  for (let index = 0; index < count; index++) {
    if (at + 46 > end || bytes.readUInt32LE(at) !== CENTRAL_HEADER) throw corrupt(`central directory entry ${index} is malformed`);
    const flags = bytes.readUInt16LE(at + 8);
    const method = bytes.readUInt16LE(at + 10);
    const crc = bytes.readUInt32LE(at + 16);
    const compressedSize = bytes.readUInt32LE(at + 20);
    const size = bytes.readUInt32LE(at + 24);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const localOffset = bytes.readUInt32LE(at + 42);
    const name = bytes.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    at += 46 + nameLength + extraLength + commentLength;

    checkEntryName(name);
    if (seen.has(name)) throw corrupt(`entry ${JSON.stringify(name)} appears twice`);
    seen.add(name);
    if (flags & FLAG_ENCRYPTED) throw corrupt(`entry ${JSON.stringify(name)} is encrypted`);
    if (method !== METHOD_STORE && method !== METHOD_DEFLATE) throw corrupt(`entry ${JSON.stringify(name)} uses compression method ${method} (only stored and deflate are read)`);
    total += size;
    if (total > limits.maxTotalBytes) throw corrupt(`entries unpack to more than the limit of ${limits.maxTotalBytes} bytes`);

    if (localOffset + 30 > bytes.length || bytes.readUInt32LE(localOffset) !== LOCAL_HEADER) throw corrupt(`the local header of ${JSON.stringify(name)} is missing`);
    const dataStart = localOffset + 30 + bytes.readUInt16LE(localOffset + 26) + bytes.readUInt16LE(localOffset + 28);
    if (dataStart + compressedSize > bytes.length) throw corrupt(`the data of ${JSON.stringify(name)} runs past the end of the file`);
    const body = bytes.subarray(dataStart, dataStart + compressedSize);
    let data: Buffer;
    if (method === METHOD_STORE) {
      data = Buffer.from(body);
    } else {
      try {
        // One byte over the declared size lets a lying header show itself instead of being cut short.
        data = inflateRawSync(body, { maxOutputLength: size + 1 });
      } catch (error) {
        throw corrupt(`entry ${JSON.stringify(name)} does not inflate (${(error as Error).message})`);
      }
    }
    if (data.length !== size) throw corrupt(`entry ${JSON.stringify(name)} unpacks to ${data.length} bytes, not the ${size} its header says`);
    if (crc32(data) !== crc) throw corrupt(`entry ${JSON.stringify(name)} fails its CRC check`);
    entries.push({ name, data });
  }
  return entries;
}
