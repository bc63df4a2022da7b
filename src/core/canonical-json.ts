// Owns canonical JSON: object keys sorted, no whitespace. Every hash and every
// byte comparison in the factory goes through here so that key order produced
// by a parser or a model never changes a verdict.
//
// Snapshots are hashed and compared several times per episode, so both
// operations have a fast path. The fast serializer tracks depth instead of
// keeping a set of the objects it is inside; past DEPTH_LIMIT it hands the
// whole value to the checked serializer below, which reports a cycle exactly
// as before (and serializes a merely deep value the same way). Equality walks
// both values side by side instead of building two strings, and asks the
// serializers whenever the walk cannot tell the answer on its own.

/** Deeper than any value the factory builds; past it, cycles are looked for. */
const DEPTH_LIMIT = 256;

class TooDeep extends Error {}

export function canonicalJson(value: unknown): string {
  try {
    return write(value, 0);
  } catch (error) {
    if (error instanceof TooDeep) return serializeChecked(value, new Set());
    throw error;
  }
}

/** The same output as serializeChecked, without the set of ancestors. */
function write(value: unknown, depth: number): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot encode ${value}`);
      // Number::toString, as JSON.stringify prints a finite number (-0 as 0).
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      throw new TypeError('canonical JSON cannot encode undefined outside an object');
    case 'bigint':
      return value.toString();
    case 'object': {
      if (depth >= DEPTH_LIMIT) throw new TooDeep();
      if (Array.isArray(value)) {
        const length = value.length;
        if (length === 0) return '[]';
        let out = '[';
        for (let index = 0; index < length; index++) {
          const item: unknown = value[index];
          if (index > 0) out += ',';
          // A hole prints as nothing, as Array.prototype.map and join leave it.
          if (item === undefined) out += index in value ? 'null' : '';
          else out += write(item, depth + 1);
        }
        return out + ']';
      }
      const record = value as Record<string, unknown>;
      const shape = shapeOf(Object.keys(record));
      const { sorted, quoted } = shape;
      let out = '{';
      let first = true;
      for (let index = 0; index < sorted.length; index++) {
        const item = record[sorted[index]!];
        if (item === undefined) continue;
        if (first) first = false;
        else out += ',';
        out += quoted[index]! + write(item, depth + 1);
      }
      return out + '}';
    }
    default:
      throw new TypeError(`canonical JSON cannot encode a ${typeof value}`);
  }
}

/**
 * JSON.stringify of a string. Most strings need no escape, and finding that
 * out here costs less than the call: anything below U+0020, a quote, a
 * backslash or any surrogate (a lone one is escaped) goes to JSON.stringify.
 */
function quote(text: string): string {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(text);
  }
  return '"' + text + '"';
}

/** An object's keys as listed, in sorted order, and each printed as `"key":`. */
interface Shape {
  keys: readonly string[];
  sorted: readonly string[];
  quoted: readonly string[];
}

/**
 * Objects of one kind (every issue, every message) list the same keys in the
 * same order, so their sorted order and printed keys are worked out once per
 * list of keys. Maps keyed by ids make a new list per value: those are not
 * kept past a size (the cache starts over), and objects with many keys, which
 * are such maps, are sorted each time as before.
 */
const shapes = new Map<string, Map<string, Shape[]>>();
let shapeCount = 0;
const MAX_SHAPES = 8192;
const MAX_SHAPE_KEYS = 32;
const MAX_SHAPES_PER_ENDS = 16;
const EMPTY_SHAPE: Shape = { keys: [], sorted: [], quoted: [] };

function shapeOf(keys: string[]): Shape {
  const length = keys.length;
  if (length === 0) return EMPTY_SHAPE;
  if (length > MAX_SHAPE_KEYS) return newShape(keys);
  // Found by first and last key (strings whose hashes the engine keeps), then compared key by key.
  let byLast = shapes.get(keys[0]!);
  let candidates = byLast?.get(keys[length - 1]!);
  if (candidates) {
    for (let index = 0; index < candidates.length; index++) {
      const candidate = candidates[index]!;
      if (sameKeys(candidate, keys)) return candidate;
    }
  }
  const shape = newShape(keys);
  // Many lists sharing first and last key would make every lookup a long scan.
  if (candidates && candidates.length >= MAX_SHAPES_PER_ENDS) return shape;
  if (shapeCount >= MAX_SHAPES) {
    shapes.clear();
    shapeCount = 0;
    byLast = undefined;
    candidates = undefined;
  }
  shapeCount++;
  if (!byLast) shapes.set(keys[0]!, (byLast = new Map()));
  if (candidates) candidates.push(shape);
  else byLast.set(keys[length - 1]!, [shape]);
  return shape;
}

/** Whether an object lists exactly these keys in this order. */
function sameKeys(shape: Shape, keys: string[]): boolean {
  const known = shape.keys;
  if (known.length !== keys.length) return false;
  for (let index = 0; index < keys.length; index++) if (known[index] !== keys[index]) return false;
  return true;
}

function newShape(keys: string[]): Shape {
  // Default sort: UTF-16 code unit order, as before.
  const sorted = keys.slice().sort();
  return { keys, sorted, quoted: sorted.map((key) => quote(key) + ':') };
}

function serializeChecked(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot encode ${value}`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      throw new TypeError('canonical JSON cannot encode undefined outside an object');
    case 'bigint':
      return value.toString();
    case 'object': {
      if (seen.has(value)) throw new TypeError('canonical JSON cannot encode a cycle');
      seen.add(value);
      let out: string;
      if (Array.isArray(value)) {
        out = '[' + value.map((item) => (item === undefined ? 'null' : serializeChecked(item, seen))).join(',') + ']';
      } else {
        const record = value as Record<string, unknown>;
        const keys = Object.keys(record)
          .filter((key) => record[key] !== undefined)
          .sort();
        out = '{' + keys.map((key) => JSON.stringify(key) + ':' + serializeChecked(record[key], seen)).join(',') + '}';
      }
      seen.delete(value);
      return out;
    }
    default:
      throw new TypeError(`canonical JSON cannot encode a ${typeof value}`);
  }
}

/** The walk met something only the serializers can judge (a bigint, a value JSON cannot carry, great depth). */
class AskSerializer extends Error {}

/**
 * Deep equality under canonical JSON (key order ignored, undefined-valued keys
 * absent, an undefined array item equal to null): exactly
 * `canonicalJson(left) === canonicalJson(right)`, including throwing the same
 * error when either side cannot be encoded.
 */
export function canonicalEquals(left: unknown, right: unknown): boolean {
  try {
    if (same(left, right, 0)) return true;
    // Unequal, but the serializers would throw if either side held something
    // JSON cannot carry in a part the walk never reached: look at all of it.
    if (typeof left === 'object' || typeof right === 'object') {
      encodable(left, 0);
      encodable(right, 0);
    }
    return false;
  } catch (error) {
    if (error instanceof AskSerializer) return canonicalJson(left) === canonicalJson(right);
    throw error;
  }
}

/** Whether both values serialize to the same text; AskSerializer when it cannot tell. */
function same(left: unknown, right: unknown, depth: number): boolean {
  const kind = typeof left;
  if (kind !== 'object' || left === null) {
    switch (kind) {
      case 'string':
      case 'boolean':
        if (left === right) return true;
        break;
      case 'number':
        if (!Number.isFinite(left)) throw new AskSerializer();
        if (left === right) return true; // 0 and -0 both print as 0
        break;
      case 'object': // null
        if (right === null) return true;
        break;
      default: // undefined, bigint, function, symbol
        throw new AskSerializer();
    }
    // Different, unless the other side is something only the serializer can judge.
    const other = typeof right;
    if (other === 'number' && !Number.isFinite(right)) throw new AskSerializer();
    if (other !== 'string' && other !== 'number' && other !== 'boolean' && other !== 'object') throw new AskSerializer();
    return false;
  }
  if (typeof right !== 'object' || right === null) {
    if (typeof right !== 'string' && typeof right !== 'number' && typeof right !== 'boolean' && right !== null) throw new AskSerializer();
    if (typeof right === 'number' && !Number.isFinite(right)) throw new AskSerializer();
    return false;
  }
  if (depth >= DEPTH_LIMIT) throw new AskSerializer();
  const leftArray = Array.isArray(left);
  if (leftArray !== Array.isArray(right)) return false;
  if (leftArray) {
    const a = left as unknown[];
    const b = right as unknown[];
    if (a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) {
      const x = a[index];
      const y = b[index];
      // A hole prints differently from undefined (see write): let the serializer say.
      if ((x === undefined && !(index in a)) || (y === undefined && !(index in b))) throw new AskSerializer();
      if (!same(x === undefined ? null : x, y === undefined ? null : y, depth + 1)) return false;
    }
    return true;
  }
  const a = left as Record<string, unknown>;
  const b = right as Record<string, unknown>;
  const keys = Object.keys(a);
  let defined = 0;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    const x = a[key];
    if (x === undefined) continue;
    defined++;
    // Own and enumerable, as Object.keys would list it: never an inherited name.
    if (!Object.prototype.propertyIsEnumerable.call(b, key)) return false;
    const y = b[key];
    if (y === undefined) return false;
    if (!same(x, y, depth + 1)) return false;
  }
  const otherKeys = Object.keys(b);
  if (otherKeys.length === defined) return true;
  let otherDefined = 0;
  for (let index = 0; index < otherKeys.length; index++) if (b[otherKeys[index]!] !== undefined) otherDefined++;
  return otherDefined === defined;
}

/** AskSerializer if canonicalJson would throw for this value (or it is too deep to tell cheaply). */
function encodable(value: unknown, depth: number): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new AskSerializer();
      return;
    case 'object': {
      if (value === null) return;
      if (depth >= DEPTH_LIMIT) throw new AskSerializer();
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          const item: unknown = value[index];
          if (item !== undefined) encodable(item, depth + 1);
        }
        return;
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let index = 0; index < keys.length; index++) {
        const item = record[keys[index]!];
        if (item !== undefined) encodable(item, depth + 1);
      }
      return;
    }
    default: // undefined at the top, bigint (encodable, but left to the serializer), function, symbol
      throw new AskSerializer();
  }
}
