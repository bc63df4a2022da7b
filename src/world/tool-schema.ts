// Owns the one builder of a scripted world's closed object schema (draft
// 2020-12): the shape every tool input, and most outputs, take in tools/list.
// Key order is part of the catalog's bytes, so it is fixed here once.

import type { JsonObject } from '../core/json-value.js';

/** An object with exactly these properties; `extra` adds keywords (description, minProperties, …) after the fixed ones. */
export function objectSchema(properties: JsonObject, required: string[], extra: JsonObject = {}): JsonObject {
  return { type: 'object', properties, required, additionalProperties: false, ...extra };
}
