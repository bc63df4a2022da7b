// Owns checking what a read-back shows: a JSON pointer into the result that
// must equal a value, or contain one (a list element, where objects match on
// the fields given, or a substring).

import { canonicalEquals } from '../core/canonical-json.js';
import { isJsonObject, type JsonValue } from '../core/json-value.js';
import { resolvePointer } from '../core/json-pointer.js';

export interface ReadExpectation {
  path: string;
  equals?: JsonValue;
  contains?: JsonValue;
}

function partialMatch(actual: unknown, expected: JsonValue): boolean {
  if (isJsonObject(expected) && isJsonObject(actual)) {
    return Object.entries(expected).every(([key, value]) => partialMatch(actual[key], value));
  }
  return canonicalEquals(actual, expected);
}

export function expectationMet(result: unknown, expectation: ReadExpectation): boolean {
  const { found, value } = resolvePointer(result, expectation.path);
  if (!found) return false;
  if (expectation.equals !== undefined) return canonicalEquals(value, expectation.equals);
  if (expectation.contains !== undefined) {
    if (Array.isArray(value)) return value.some((item) => partialMatch(item, expectation.contains!));
    if (typeof value === 'string') return value.includes(String(expectation.contains));
    return false;
  }
  return true;
}
