// Owns repairing a rejected call from what the error says: the fields it
// names are restored from the intended call (or dropped, when the intended
// call has no such field). The error is read from the text the model saw: the
// runner's JSON rejection, or a server's "Invalid arguments for …: a: …; b: …".

import { isJsonObject, type JsonObject } from '../core/json-value.js';

/** Top-level argument names an error text blames, in order, without repeats. */
export function blamedFields(errorText: string): string[] {
  const paths: string[] = [];
  try {
    const parsed = JSON.parse(errorText) as unknown;
    if (isJsonObject(parsed) && Array.isArray(parsed.errors)) {
      for (const entry of parsed.errors) if (isJsonObject(entry) && typeof entry.path === 'string') paths.push(entry.path);
    }
  } catch {
    const listed = /Invalid arguments for [^:]+: (.*)$/s.exec(errorText)?.[1];
    if (listed) for (const part of listed.split('; ')) paths.push(part.split(': ', 1)[0]!);
  }
  const fields = paths.map((path) => path.split(/[.[]/, 1)[0]!).filter((field) => field && field !== '(root)');
  return [...new Set(fields)];
}

/** The issued arguments with every blamed field put right; the intended call when nothing is blamed. */
export function repairArguments(issued: JsonObject, intended: JsonObject, errorText: string): { arguments: JsonObject; fields: string[] } {
  const fields = blamedFields(errorText);
  if (fields.length === 0) return { arguments: structuredClone(intended), fields };
  const repaired: JsonObject = { ...issued };
  for (const field of fields) {
    if (field in intended) repaired[field] = structuredClone(intended[field]!);
    else delete repaired[field];
  }
  return { arguments: repaired, fields };
}
