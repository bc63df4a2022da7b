// Owns the one order the dataset layer puts keys in: code-unit order, the
// same on every machine (unlike localeCompare), so a map built from records
// serialises to the same bytes wherever it is built.

/** Code-unit order: the same on every machine, unlike localeCompare. */
export function compareKeys(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

export function sortedRecord<T>(entries: Map<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of [...entries.keys()].sort(compareKeys)) out[key] = entries.get(key)!;
  return out;
}
