// Owns the limits on JSON that arrives from outside (a client, a model, a
// file): how deep it may nest and how large it may be, checked before the
// value reaches code that recurses over it (Ajv, canonical JSON, the MCP SDK,
// JSON.stringify), so a hostile document gets an error naming the limit
// instead of a stack overflow. The checks are iterative: they cannot overflow
// themselves, whatever the input.

/**
 * How deep a value from a client, a model or a definition file may nest.
 * Real tool arguments nest a few levels; the factory's own recursion is safe
 * far past this, so a record that wraps such a value stays well inside
 * MAX_RECORD_DEPTH.
 */
export const MAX_JSON_DEPTH = 128;

/** How deep a record line may nest: MAX_JSON_DEPTH of arguments inside the record's own structure, with room to spare. */
export const MAX_RECORD_DEPTH = 256;

export type JsonLimit = 'depth' | 'size';

/** A document past a limit: says which, the limit and what was found. */
export class JsonLimitError extends Error {
  constructor(
    readonly limit: JsonLimit,
    readonly maximum: number,
    readonly found: number,
    where = 'the JSON',
  ) {
    super(
      limit === 'depth'
        ? `${where} nests deeper than ${maximum} levels (the limit on nesting)`
        : `${where} is ${found} bytes, over the limit of ${maximum} bytes`,
    );
    this.name = 'JsonLimitError';
  }
}

/**
 * The nesting depth of JSON text, scanning it once: brackets inside strings do
 * not count. Stops as soon as the depth passes `stopAfter` (returning that
 * depth), so a hostile document costs no more than its first levels. Text
 * that is not JSON gets a depth too; JSON.parse then says what is wrong.
 */
export function jsonTextDepth(text: string, stopAfter = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++; // backslash: the next character is escaped
      else if (code === 0x22) inString = false;
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAfter) return deepest;
      }
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return deepest;
}

/** The nesting depth of a parsed value (a scalar is 0, `[]` and `{}` are 1), without recursion; stops past `stopAfter`. */
export function valueDepth(value: unknown, stopAfter = Number.POSITIVE_INFINITY): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (depth > deepest) {
      deepest = depth;
      if (deepest > stopAfter) return deepest;
    }
    const children = Array.isArray(current) ? current : Object.values(current as object);
    for (const child of children) if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** Throws JsonLimitError when a parsed value nests deeper than `maxDepth`. */
export function assertValueDepth(value: unknown, maxDepth = MAX_JSON_DEPTH, where?: string): void {
  const depth = valueDepth(value, maxDepth);
  if (depth > maxDepth) throw new JsonLimitError('depth', maxDepth, depth, where);
}

export interface JsonBounds {
  /** Deepest nesting allowed (default MAX_JSON_DEPTH). */
  maxDepth?: number;
  /** Largest text allowed, in UTF-8 bytes (default: no limit). */
  maxBytes?: number;
  /** How the error names the document ("the request body", "lanes/x.json"). */
  where?: string;
}

/**
 * JSON.parse behind the limits: size first, then depth, then the parse. A
 * syntax error is JSON.parse's own SyntaxError; a limit is a JsonLimitError.
 */
export function parseBoundedJson(text: string, bounds: JsonBounds = {}): unknown {
  const maxDepth = bounds.maxDepth ?? MAX_JSON_DEPTH;
  if (bounds.maxBytes !== undefined && text.length > bounds.maxBytes / 3) {
    // A UTF-8 byte count is needed only when the text could be over: at most 3 bytes per UTF-16 unit.
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > bounds.maxBytes) throw new JsonLimitError('size', bounds.maxBytes, bytes, bounds.where);
  }
  const depth = jsonTextDepth(text, maxDepth);
  if (depth > maxDepth) throw new JsonLimitError('depth', maxDepth, depth, bounds.where);
  return JSON.parse(text);
}
