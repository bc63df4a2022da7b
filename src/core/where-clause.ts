// Owns `where` clauses: the filters lanes use to pick task parameters from a
// snapshot and hidden predicates use to count or list items. A field maps to a
// literal (deep equality) or a one-key matcher such as {"includes": "bug"}.

import { canonicalEquals } from './canonical-json.js';
import { isJsonObject, type JsonValue } from './json-value.js';
import { resolvePointer } from './json-pointer.js';

export type Matcher =
  | { equals: JsonValue }
  | { not: JsonValue }
  | { includes: JsonValue }
  | { excludes: JsonValue }
  | { contains: string }
  | { in: JsonValue[] }
  | { exists: boolean };

export type Where = Record<string, JsonValue | Matcher>;

const MATCHER_KEYS = new Set(['equals', 'not', 'includes', 'excludes', 'contains', 'in', 'exists']);

export function isMatcher(value: unknown): value is Matcher {
  if (!isJsonObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && MATCHER_KEYS.has(keys[0]!);
}

export function fieldValue(item: unknown, field: string): { found: boolean; value: unknown } {
  let current: unknown = item;
  for (const segment of field.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.prototype.hasOwnProperty.call(current, segment)) {
      return { found: false, value: undefined };
    }
    current = (current as Record<string, unknown>)[segment];
  }
  return { found: true, value: current };
}

export function matchesWhere(item: unknown, where: Where | undefined): boolean {
  if (!where) return true;
  return Object.entries(where).every(([field, expected]) => matchesField(fieldValue(item, field), expected));
}

function matchesField(actual: { found: boolean; value: unknown }, expected: JsonValue | Matcher): boolean {
  if (!isMatcher(expected)) return actual.found && canonicalEquals(actual.value, expected);
  const matcher = expected as Record<string, JsonValue>;
  const [operator] = Object.keys(matcher) as [keyof typeof matcher];
  const operand = matcher[operator]!;
  const value = actual.value;
  switch (operator) {
    case 'equals':
      return actual.found && canonicalEquals(value, operand);
    case 'not':
      return !actual.found || !canonicalEquals(value, operand);
    case 'includes':
      return Array.isArray(value) && value.some((entry) => canonicalEquals(entry, operand));
    case 'excludes':
      return !Array.isArray(value) || !value.some((entry) => canonicalEquals(entry, operand));
    case 'contains':
      return typeof value === 'string' && value.toLowerCase().includes(String(operand).toLowerCase());
    case 'in':
      return Array.isArray(operand) && operand.some((entry) => canonicalEquals(value, entry));
    case 'exists':
      return operand ? actual.found && value !== null : !actual.found || value === null;
    default:
      return false;
  }
}

/** The items of a list, or the values of a map in key order, at `pointer`. */
export function collectionAt(document: unknown, pointer: string): unknown[] | undefined {
  const { found, value } = resolvePointer(document, pointer);
  if (!found) return undefined;
  if (Array.isArray(value)) return value;
  if (isJsonObject(value)) {
    return Object.keys(value)
      .sort()
      .map((key) => value[key]);
  }
  return undefined;
}
