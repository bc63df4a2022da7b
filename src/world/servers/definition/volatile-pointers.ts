// Owns volatile pointers: the places of a snapshot (a commit hash, a generated
// id) whose values differ between two honest runs, written as JSON pointers
// where a `*` segment stands for any one key or index. `lanes check` refuses
// a predicate that pins the value at such a place.

import { formatPointer, parsePointer } from '../../../core/json-pointer.js';

/** Whether `pointer` is one of the places `patterns` name (same depth; `*` matches one segment). */
export function matchesVolatile(pointer: string, patterns: string[]): boolean {
  const tokens = parsePointer(pointer);
  return patterns.some((pattern) => {
    const wanted = parsePointer(pattern);
    return wanted.length === tokens.length && wanted.every((segment, index) => segment === '*' || segment === tokens[index]);
  });
}

function children(value: unknown): [string, unknown][] {
  if (Array.isArray(value)) return value.map((item, index) => [String(index), item]);
  if (typeof value === 'object' && value !== null) return Object.entries(value);
  return [];
}

/** Every concrete pointer of `snapshot` a pattern names, each once, sorted. */
export function volatileLeaves(snapshot: unknown, patterns: string[]): string[] {
  const found = new Set<string>();
  function expand(value: unknown, path: string[], rest: string[]): void {
    if (rest.length === 0) {
      found.add(formatPointer(path));
      return;
    }
    const [segment, ...remaining] = rest as [string, ...string[]];
    for (const [key, child] of children(value)) {
      if (segment === '*' || segment === key) expand(child, [...path, key], remaining);
    }
  }
  for (const pattern of patterns) expand(snapshot, [], parsePointer(pattern));
  return [...found].sort();
}
