// Owns JSON text as the model families see it and write it. Their chat
// templates render tools and arguments with Jinja's `tojson`, which is Python's
// json.dumps, so a prompt is only byte-exact if we serialize the way Python
// does. Reading what a model wrote goes through a strict parser of our own
// because JSON.parse's error messages change between Node versions, and a
// malformed call's reason is written into records that must be byte-identical
// from machine to machine.

import { isJsonObject, type JsonObject, type JsonValue } from '../../core/json-value.js';

/** Python's `json.dumps(value, ensure_ascii=False)`: separators ", " and ": ", keys in insertion order. */
export function pythonJson(value: unknown): string {
  return serialize(value, undefined, '', new Set());
}

/** Python's `json.dumps(value, indent=4, ensure_ascii=False)`: "," then a newline between items, ": " after keys. */
export function pythonJsonIndented(value: unknown, indent = 4): string {
  return serialize(value, ' '.repeat(indent), '', new Set());
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

// Python leaves a lone surrogate raw, which no UTF-8 tokenizer can encode; escaping it is the only usable choice.
const NEEDS_ESCAPE = /["\\\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function pythonString(text: string): string {
  return '"' + text.replace(NEEDS_ESCAPE, (character) => SHORT_ESCAPES[character] ?? '\\u' + character.charCodeAt(0).toString(16).padStart(4, '0')) + '"';
}

function pythonNumber(value: number): string {
  // json.dumps writes non-finite floats as these bare words (allow_nan defaults to True).
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return String(value);
}

function serialize(value: unknown, indent: string | undefined, level: string, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return pythonString(value);
    case 'number':
      return pythonNumber(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw new TypeError(`Python JSON cannot encode a ${typeof value}`);
  }
  if (seen.has(value)) throw new TypeError('Python JSON cannot encode a cycle');
  seen.add(value);
  const inner = indent === undefined ? level : level + indent;
  let items: string[];
  let open: string;
  let close: string;
  if (Array.isArray(value)) {
    items = value.map((item) => (item === undefined ? 'null' : serialize(item, indent, inner, seen)));
    [open, close] = ['[', ']'];
  } else {
    const record = value as Record<string, unknown>;
    items = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .map((key) => pythonString(key) + ': ' + serialize(record[key], indent, inner, seen));
    [open, close] = ['{', '}'];
  }
  seen.delete(value);
  if (items.length === 0) return open + close;
  if (indent === undefined) return open + items.join(', ') + close;
  return open + '\n' + inner + items.join(',\n' + inner) + '\n' + level + close;
}

export type JsonParse = { ok: true; value: JsonValue } | { ok: false; error: string };
export type JsonPrefixParse = { ok: true; value: JsonValue; end: number } | { ok: false; error: string };

/** The whole text as one JSON value (surrounding whitespace allowed), with a stable error message. */
export function parseJson(text: string): JsonParse {
  const parsed = parseJsonPrefix(text);
  if (!parsed.ok) return parsed;
  const end = skipWhitespace(text, parsed.end);
  if (end < text.length) return { ok: false, error: `unexpected text after the JSON value at offset ${end}` };
  return { ok: true, value: parsed.value };
}

/** One JSON value at the start of the text (after whitespace); `end` is the offset just past it. */
export function parseJsonPrefix(text: string): JsonPrefixParse {
  const reader = new JsonReader(text);
  try {
    const value = reader.value(0);
    return { ok: true, value, end: reader.offset };
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { ok: false, error: error.message };
    throw error;
  }
}

/** An object, or a string that holds one: some models encode a call's arguments a second time. */
export function decodeJsonObject(value: unknown): JsonObject | undefined {
  if (isJsonObject(value)) return value;
  if (typeof value !== 'string') return undefined;
  const parsed = parseJson(value);
  return parsed.ok && isJsonObject(parsed.value) ? parsed.value : undefined;
}

/** The JSON type of a value, for reasons such as `"arguments" is an array, not an object`. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Why a value that should be an object (or hold one) is not, for a malformed call's reason. */
export function notAnObject(value: unknown): string {
  return typeof value === 'string' ? 'a string that does not hold a JSON object' : `${jsonTypeName(value)}, not an object`;
}

class JsonSyntaxError extends Error {}

const MAX_DEPTH = 512;
const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

function skipWhitespace(text: string, offset: number): number {
  while (offset < text.length && WHITESPACE.has(text[offset]!)) offset += 1;
  return offset;
}

class JsonReader {
  offset = 0;

  constructor(private readonly text: string) {}

  value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) throw new JsonSyntaxError(`nesting deeper than ${MAX_DEPTH} at offset ${this.offset}`);
    this.offset = skipWhitespace(this.text, this.offset);
    const character = this.text[this.offset];
    switch (character) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (character === '-' || (character !== undefined && character >= '0' && character <= '9')) return this.number();
        throw this.unexpected();
    }
  }

  private unexpected(): JsonSyntaxError {
    const character = this.text[this.offset];
    if (character === undefined) return new JsonSyntaxError('unexpected end of input');
    return new JsonSyntaxError(`unexpected ${JSON.stringify(character)} at offset ${this.offset}`);
  }

  private expect(character: string): void {
    this.offset = skipWhitespace(this.text, this.offset);
    if (this.text[this.offset] !== character) throw this.unexpected();
    this.offset += 1;
  }

  /** After whitespace, consumes `character` if it is next. */
  private accept(character: string): boolean {
    this.offset = skipWhitespace(this.text, this.offset);
    if (this.text[this.offset] !== character) return false;
    this.offset += 1;
    return true;
  }

  private object(depth: number): JsonObject {
    this.offset += 1;
    const result: JsonObject = {};
    if (this.accept('}')) return result;
    do {
      this.offset = skipWhitespace(this.text, this.offset);
      if (this.text[this.offset] !== '"') throw this.unexpected();
      const key = this.string();
      this.expect(':');
      const item = this.value(depth + 1);
      // Assigning "__proto__" would replace the prototype instead of adding a key, as JSON.parse does.
      Object.defineProperty(result, key, { value: item, enumerable: true, writable: true, configurable: true });
    } while (this.accept(','));
    this.expect('}');
    return result;
  }

  private array(depth: number): JsonValue[] {
    this.offset += 1;
    const result: JsonValue[] = [];
    if (this.accept(']')) return result;
    do {
      result.push(this.value(depth + 1));
    } while (this.accept(','));
    this.expect(']');
    return result;
  }

  private string(): string {
    this.offset += 1;
    let result = '';
    let runStart = this.offset;
    for (;;) {
      const character = this.text[this.offset];
      if (character === undefined) throw new JsonSyntaxError('unexpected end of input inside a string');
      if (character === '"') break;
      if (character < ' ') throw new JsonSyntaxError(`unescaped control character ${JSON.stringify(character)} in a string at offset ${this.offset}`);
      if (character !== '\\') {
        this.offset += 1;
        continue;
      }
      result += this.text.slice(runStart, this.offset);
      result += this.escape();
      runStart = this.offset;
    }
    result += this.text.slice(runStart, this.offset);
    this.offset += 1;
    return result;
  }

  /** At a backslash: returns what the escape stands for and moves past it. */
  private escape(): string {
    const start = this.offset;
    const kind = this.text[start + 1];
    if (kind === undefined) throw new JsonSyntaxError('unexpected end of input inside a string');
    const simple = SIMPLE_ESCAPES[kind];
    if (simple !== undefined) {
      this.offset += 2;
      return simple;
    }
    const hex = this.text.slice(start + 2, start + 6);
    if (kind === 'u' && /^[0-9a-fA-F]{4}$/.test(hex)) {
      this.offset += 6;
      return String.fromCharCode(parseInt(hex, 16));
    }
    throw new JsonSyntaxError(`invalid escape ${JSON.stringify(this.text.slice(start, kind === 'u' ? start + 6 : start + 2))} at offset ${start}`);
  }

  private number(): number {
    NUMBER.lastIndex = this.offset;
    const match = NUMBER.exec(this.text);
    if (!match) throw new JsonSyntaxError(`invalid number at offset ${this.offset}`);
    this.offset += match[0].length;
    return Number(match[0]);
  }

  private literal<T extends JsonValue>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.offset)) throw new JsonSyntaxError(`invalid literal at offset ${this.offset}`);
    this.offset += word.length;
    return value;
  }
}
