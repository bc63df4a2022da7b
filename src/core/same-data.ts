// Owns telling that two values are the same data without printing them: one
// is the other, or both are plain objects or arrays listing the same keys in
// the same order with values that are the same data in turn. It errs only
// towards "not the same" (NaN, holes, undefined values, class instances, great
// depth), so a cached result built from one may stand for the other: they
// print to the same JSON and canonical JSON, and copy to equal values.

const DEPTH_LIMIT = 64;

export function sameData(left: unknown, right: unknown): boolean {
  return same(left, right, 0);
}

function same(left: unknown, right: unknown, depth: number): boolean {
  // 0 and -0 print alike but copy apart.
  if (left === right) return left !== 0 || Object.is(left, right);
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (depth >= DEPTH_LIMIT) return false;
  const prototype = Object.getPrototypeOf(left) as unknown;
  if (prototype !== Object.getPrototypeOf(right)) return false;
  if (prototype === Array.prototype) {
    const a = left as unknown[];
    const b = right as unknown[];
    if (a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) {
      // undefined and holes print differently in different places: never the same.
      const x = a[index];
      if (x === undefined || !same(x, b[index], depth + 1)) return false;
    }
    return true;
  }
  if (prototype !== Object.prototype && prototype !== null) return false;
  const a = left as Record<string, unknown>;
  const b = right as Record<string, unknown>;
  const keys = Object.keys(a);
  const otherKeys = Object.keys(b);
  if (keys.length !== otherKeys.length) return false;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    if (key !== otherKeys[index]) return false;
    const x = a[key];
    if (x === undefined || !same(x, b[key], depth + 1)) return false;
  }
  return true;
}
