// Owns reading a JSON definition file a user writes (a lane, its rewrites
// cache, a fault plan) within limits: its size is checked before it is read,
// its bytes must be UTF-8, and its nesting is bounded before anything (the
// schema validator, the lane checks, the lane's hash) recurses over it. Each
// loader turns what goes wrong into its own error shape, naming the file; the
// reason for a limit says which limit and how to get under it.

import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson } from './bounded-json.js';
import { decodeUtf8 } from './utf8-text.js';

/** The largest definition file read: lanes are tens of kilobytes, a rewrites cache a few hundred. */
export const MAX_DEFINITION_BYTES = 16 * 1024 * 1024;

/** How deep a definition file may nest: the factory's own lanes nest about a dozen levels. */
export const MAX_DEFINITION_DEPTH = MAX_JSON_DEPTH;

/**
 * The file's JSON document. Throws the file system's error when it cannot be
 * read, InvalidUtf8Error when it is not UTF-8, JsonLimitError past a limit,
 * and JSON.parse's SyntaxError when it is not JSON.
 */
export function readDefinitionFile(path: string): unknown {
  const descriptor = openSync(path, 'r');
  let bytes: Buffer;
  try {
    // The size is known before a byte is read: a huge file is refused without being loaded.
    const size = fstatSync(descriptor).size;
    if (size > MAX_DEFINITION_BYTES) throw new JsonLimitError('size', MAX_DEFINITION_BYTES, size);
    bytes = readFileSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  return parseDefinition(decodeUtf8(bytes));
}

/** Definition text's JSON document, within the same limits (JsonLimitError past one, SyntaxError when it is not JSON). */
export function parseDefinition(text: string): unknown {
  return parseBoundedJson(text, { maxDepth: MAX_DEFINITION_DEPTH, maxBytes: MAX_DEFINITION_BYTES });
}

/** What a problem says of a definition past a limit: which limit, and what was found; the loader adds how to get under it. */
export function limitReason(error: JsonLimitError, what: string): string {
  return error.limit === 'depth'
    ? `nests deeper than ${error.maximum} levels, the limit for ${what}`
    : `is ${error.found} bytes, over the limit of ${error.maximum} bytes for ${what}`;
}
