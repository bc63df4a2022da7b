// Owns the JSON Schema pieces a world's config is made of, so every world
// writes an inclusive integer range the same way.

import type { JsonObject } from '../core/json-value.js';

/** `[low, high]`, both integers in [minimum, maximum]. */
export function inclusiveRangeSchema(minimum: number, maximum: number, description: string): JsonObject {
  const bound = { type: 'integer', minimum, maximum };
  return { type: 'array', prefixItems: [bound, { ...bound }], items: false, minItems: 2, description };
}
