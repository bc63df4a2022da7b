// Owns finding a JSON-RPC message's id without parsing the message: in a
// message refused before its parse (too large, too deep, not JSON), so the
// error answer can still name the request it answers and the client does not
// wait for it forever. It reads bytes in pieces as they arrive, keeps a few
// bytes of state whatever the message's size, and never recurses: a hostile
// message costs one pass and no memory. UTF-8 is read as bytes, safely: every
// byte of a multi-byte sequence is >= 0x80, so none is taken for JSON syntax.

/** Longer than any key worth reading ("id" is 4 bytes with its quotes; room for escapes). */
const MAX_KEY_BYTES = 32;
/** Longer than any id worth echoing: a longer one is left out rather than kept in memory. */
const MAX_ID_BYTES = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

export type JsonRpcId = string | number;

/**
 * Feed it a message's bytes in order, then read `id`: the value of the last
 * `"id"` key of the top-level object when that value is a string or a number,
 * otherwise null (no such key, an id that is null, an object, too long, or a
 * message that is not an object). It reports what the text says, not whether
 * the text is valid JSON.
 */
export class JsonRpcIdScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The next string at depth 1 is a key (after `{` or `,`). */
  private keyNext = false;
  private key: number[] | undefined;
  private lastKey: string | undefined;
  /** Bytes of the id's value while it is read; undefined when no id value is being read. */
  private value: number[] | undefined;
  private found: JsonRpcId | null = null;
  private topLevelObject: boolean | undefined;

  feed(bytes: Uint8Array): void {
    for (let index = 0; index < bytes.length; index++) this.step(bytes[index]!);
  }

  get id(): JsonRpcId | null {
    return this.found;
  }

  private step(byte: number): void {
    if (this.value !== undefined && this.depth === 1 && !this.inString && (byte === COMMA || byte === CLOSE_OBJECT)) this.endValue();
    else if (this.value !== undefined) {
      if (this.value.length >= MAX_ID_BYTES) this.value = undefined;
      else this.value.push(byte);
    }
    if (this.inString) {
      if (this.key !== undefined && this.key.length <= MAX_KEY_BYTES) this.key.push(byte);
      if (this.escaped) this.escaped = false;
      else if (byte === BACKSLASH) this.escaped = true;
      else if (byte === QUOTE) {
        this.inString = false;
        if (this.key !== undefined) this.endKey();
      }
      return;
    }
    switch (byte) {
      case QUOTE:
        this.inString = true;
        if (this.depth === 1 && this.keyNext) {
          this.key = [byte];
          this.keyNext = false;
        }
        return;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (this.depth === 0 && this.topLevelObject === undefined) this.topLevelObject = byte === OPEN_OBJECT;
        this.depth++;
        // The id is an object or an array: not an id.
        if (this.depth === 2 && this.value !== undefined) this.value = undefined;
        if (this.depth === 1) this.keyNext = true;
        return;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        this.depth--;
        return;
      case COMMA:
        if (this.depth === 1) this.keyNext = true;
        return;
      case COLON:
        if (this.depth === 1 && this.topLevelObject === true && this.lastKey === 'id') this.value = [];
        this.lastKey = undefined;
        return;
      default:
        return;
    }
  }

  private endKey(): void {
    const raw = this.key!;
    this.key = undefined;
    if (raw.length > MAX_KEY_BYTES) return;
    try {
      const key = JSON.parse(Buffer.from(raw).toString('utf8')) as unknown;
      if (typeof key === 'string') this.lastKey = key;
    } catch {
      // A key that is not a JSON string names nothing.
    }
  }

  private endValue(): void {
    const raw = this.value!;
    this.value = undefined;
    let id: unknown;
    try {
      id = JSON.parse(Buffer.from(raw).toString('utf8'));
    } catch {
      id = null;
    }
    // As JSON.parse would: the last "id" wins, a bad one included.
    this.found = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  }
}

/** The id of a message held whole (see JsonRpcIdScanner). */
export function scanJsonRpcId(bytes: Uint8Array): JsonRpcId | null {
  const scanner = new JsonRpcIdScanner();
  scanner.feed(bytes);
  return scanner.id;
}
