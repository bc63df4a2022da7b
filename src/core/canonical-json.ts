// Owns canonical JSON: object keys sorted, no whitespace. Every hash and every
// byte comparison in the factory goes through here so that key order produced
// by a parser or a model never changes a verdict.

export function canonicalJson(value: unknown): string {
  return serialize(value, new Set());
}

function serialize(value: unknown, seen: Set<object>): string {
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
        out = '[' + value.map((item) => (item === undefined ? 'null' : serialize(item, seen))).join(',') + ']';
      } else {
        const record = value as Record<string, unknown>;
        const keys = Object.keys(record)
          .filter((key) => record[key] !== undefined)
          .sort();
        out = '{' + keys.map((key) => JSON.stringify(key) + ':' + serialize(record[key], seen)).join(',') + '}';
      }
      seen.delete(value);
      return out;
    }
    default:
      throw new TypeError(`canonical JSON cannot encode a ${typeof value}`);
  }
}

/** Deep equality under canonical JSON (key order ignored). */
export function canonicalEquals(left: unknown, right: unknown): boolean {
  return canonicalJson(left) === canonicalJson(right);
}
