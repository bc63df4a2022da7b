// Owns the arguments the world conformance suite makes up for a tool from its
// input schema alone: the smallest object its required properties accept,
// which properties name a path (the sandbox check aims those outside), and
// which carry SQL. Nothing here knows a world; the schema is all it reads.

import { isJsonObject, type JsonObject, type JsonValue } from '../core/json-value.js';
import type { ToolSpec } from '../world/world-contract.js';

/** Property names that say "this string is a place on disk" (the sandbox check's heuristic). */
const PATH_LIKE = /path|file|dir|folder|source|destination|filename/i;
const SQL_LIKE = /^(sql|query_sql|statement)$/i;

export interface ArgumentHints {
  /** What a path-like property gets when it is not the one being aimed (a place inside the sandbox, as the model sees it). */
  insidePath: string;
}

/** A value a schema accepts, as small as it can be; `name` is the property it is for. */
export function exampleValue(schema: JsonValue | undefined, name: string, hints: ArgumentHints): JsonValue {
  if (!isJsonObject(schema)) return 'conformance probe';
  if ('const' in schema) return schema.const as JsonValue;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] as JsonValue;
  if ('default' in schema) return schema.default as JsonValue;
  const variants = (schema.anyOf ?? schema.oneOf) as JsonValue;
  if (Array.isArray(variants) && variants.length > 0) return exampleValue(variants.find((variant) => !(isJsonObject(variant) && variant.type === 'null')) ?? variants[0], name, hints);
  const type = Array.isArray(schema.type) ? (schema.type.find((entry) => entry !== 'null') as string | undefined) : (schema.type as string | undefined);
  switch (type) {
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1;
    case 'boolean':
      return false;
    case 'array': {
      const minimum = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: Math.max(minimum, 1) }, () => exampleValue(schema.items as JsonValue, name, hints));
    }
    case 'object':
      return exampleObject(schema, hints);
    case 'string':
    case undefined:
      return exampleString(schema, name, hints);
    default:
      return null;
  }
}

function exampleString(schema: JsonObject, name: string, hints: ArgumentHints): string {
  switch (schema.format) {
    case 'email':
      return 'conformance@example.com';
    case 'date':
      return '2026-01-15';
    case 'date-time':
      return '2026-01-15T12:00:00Z';
    default:
      break;
  }
  if (isPathLikeName(name)) return hints.insidePath;
  const minimum = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const text = 'conformance probe';
  return text.length >= minimum ? text : text.padEnd(minimum, 'x');
}

/** The object of an object schema's required properties, each an example value. */
export function exampleObject(schema: JsonObject, hints: ArgumentHints): JsonObject {
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  const out: JsonObject = {};
  for (const name of required) out[name] = exampleValue(properties[name], name, hints);
  return out;
}

export function isPathLikeName(name: string): boolean {
  return PATH_LIKE.test(name);
}

export interface AimedProperty {
  name: string;
  /** A list of paths (`paths: string[]`) rather than one. */
  list: boolean;
  kind: 'path' | 'sql';
}

/** The top-level properties of a tool that name a path, or carry SQL, and could be aimed outside. */
export function aimedProperties(tool: ToolSpec): AimedProperty[] {
  const properties = isJsonObject(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
  const out: AimedProperty[] = [];
  for (const [name, schema] of Object.entries(properties)) {
    if (!isJsonObject(schema)) continue;
    const items = isJsonObject(schema.items) ? schema.items : undefined;
    const isString = schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'));
    const isStringList = schema.type === 'array' && items?.type === 'string';
    if (!isString && !isStringList) continue;
    if (SQL_LIKE.test(name)) out.push({ name, list: false, kind: 'sql' });
    else if (isPathLikeName(name)) out.push({ name, list: isStringList, kind: 'path' });
  }
  return out;
}
