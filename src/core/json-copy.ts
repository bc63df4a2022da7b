// Owns deep copies of plain data: world snapshots and the observation a policy
// receives are copied so that nothing done to the copy reaches the original.
// structuredClone does that for any value but costs several times more than a
// walk over plain objects and arrays, and episodes copy a snapshot or the whole
// conversation several times each. Anything that is not plain data (a class
// instance, a Map, a function, a sparse array, a very deep or cyclic value)
// goes to structuredClone whole, so it is copied, or refused, exactly as before.

/** Deeper than any plain value the factory copies; past it, structuredClone decides (cycles included). */
const DEPTH_LIMIT = 256;

class NotPlain extends Error {}

/**
 * A deep copy, the same as structuredClone(value) for plain JSON-like data
 * (objects with the Object prototype or none, arrays without holes, strings,
 * numbers, booleans, null, undefined, bigints). One difference: an object
 * reached twice is copied twice, where structuredClone would keep one copy.
 */
export function copyPlain<T>(value: T): T {
  try {
    return copy(value, 0) as T;
  } catch (error) {
    if (error instanceof NotPlain) return structuredClone(value);
    throw error;
  }
}

function copy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object') {
    if (typeof value === 'function' || typeof value === 'symbol') throw new NotPlain();
    return value;
  }
  if (value === null) return null;
  if (depth >= DEPTH_LIMIT) throw new NotPlain();
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype === Array.prototype) {
    const array = value as unknown[];
    const length = array.length;
    const out: unknown[] = [];
    for (let index = 0; index < length; index++) {
      const item = array[index];
      if (item === undefined && !(index in array)) throw new NotPlain();
      out.push(copy(item, depth + 1));
    }
    return out;
  }
  if (prototype !== Object.prototype && prototype !== null) throw new NotPlain();
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const keys = Object.keys(record);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    // Assigning "__proto__" would set the copy's prototype instead of a field.
    if (key === '__proto__') throw new NotPlain();
    out[key] = copy(record[key], depth + 1);
  }
  return out;
}
