// Owns locating differences between two JSON values as JSON pointers, for
// reports that say exactly where a record and its replay disagree.

import { canonicalJson } from './canonical-json.js';
import { clip } from './clipped-text.js';
import { formatPointer } from './json-pointer.js';

export interface Difference {
  pointer: string;
  left: string;
  right: string;
}

const ABSENT = '(absent)';
/** The longest value a difference shows. */
const MAX_SHOWN = 120;

export function jsonDifferences(left: unknown, right: unknown, limit = 10): Difference[] {
  const out: Difference[] = [];
  walk(left, right, [], out, limit);
  return out;
}

function walk(left: unknown, right: unknown, path: (string | number)[], out: Difference[], limit: number): void {
  if (out.length >= limit) return;
  const bothArrays = Array.isArray(left) && Array.isArray(right);
  const bothObjects = isPlainObject(left) && isPlainObject(right);
  if (bothArrays) {
    const length = Math.max(left.length, right.length);
    for (let index = 0; index < length && out.length < limit; index++) {
      walk(index < left.length ? left[index] : undefined, index < right.length ? right[index] : undefined, [...path, index], out, limit);
    }
    return;
  }
  if (bothObjects) {
    const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
    for (const key of keys) {
      if (out.length >= limit) return;
      walk(left[key], right[key], [...path, key], out, limit);
    }
    return;
  }
  const leftText = left === undefined ? ABSENT : canonicalJson(left);
  const rightText = right === undefined ? ABSENT : canonicalJson(right);
  if (leftText !== rightText) out.push({ pointer: formatPointer(path) || '/', left: clip(leftText, MAX_SHOWN), right: clip(rightText, MAX_SHOWN) });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

