// Owns reading bytes as UTF-8 text strictly: a file the factory reads as data
// (a lane, a fault plan, a world config) must not have invalid bytes silently
// turned into U+FFFD, which would change what it says and its hash. The error
// names the byte offset of the first invalid sequence.

const strict = new TextDecoder('utf-8', { fatal: true });

export class InvalidUtf8Error extends Error {
  constructor(readonly offset: number) {
    super(`invalid UTF-8 at byte offset ${offset}`);
  }
}

/** Decodes UTF-8 or throws InvalidUtf8Error naming the first bad byte. A leading byte order mark is kept, as JSON.parse will then say. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return strict.decode(bytes);
  } catch {
    throw new InvalidUtf8Error(firstInvalidOffset(bytes));
  }
}

/** The offset of the first byte that does not start or continue a well-formed UTF-8 sequence (RFC 3629: no overlongs, surrogates or code points past U+10FFFF). */
export function firstInvalidOffset(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index]!;
    if (lead < 0x80) {
      index++;
      continue;
    }
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return index;
    for (let next = 1; next < length; next++) {
      const byte = bytes[index + next];
      if (byte === undefined) return index;
      const min = next === 1 ? low : 0x80;
      const max = next === 1 ? high : 0xbf;
      if (byte < min || byte > max) return index;
    }
    index += length;
  }
  return -1;
}
