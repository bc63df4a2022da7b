// Owns the deliberate argument mistakes of the `wrong_type_first` variant: the
// kinds of error small models make (a number spelled as a word or quoted, a
// list flattened to a string, a required field left out), chosen by reading the
// tool's schema from the catalog, exactly as a model would see it.

import type { ToolDescriptor } from '../core/conversation.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';

export interface Corruption {
  field: string;
  kind: 'wrong_type' | 'missing_required';
  arguments: JsonObject;
}

const SMALL = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve',
  'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

export function numberToWords(value: number): string | undefined {
  if (!Number.isInteger(value) || value < 0 || value > 100) return undefined;
  if (value === 100) return 'one hundred';
  if (value < 20) return SMALL[value];
  const tens = TENS[Math.floor(value / 10)]!;
  return value % 10 === 0 ? tens : `${tens}-${SMALL[value % 10]}`;
}

function wrongTypeFor(value: JsonValue): JsonValue | undefined {
  if (typeof value === 'number') return numberToWords(value) ?? String(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.map((item) => String(item)).join(',');
  return undefined;
}

/** Returns a corrupted copy of `args`, or undefined when nothing can be corrupted. */
export function corruptArguments(tool: ToolDescriptor | undefined, args: unknown, random: Random): Corruption | undefined {
  if (!tool || !isJsonObject(args)) return undefined;
  const required = new Set(Array.isArray(tool.input_schema.required) ? (tool.input_schema.required as string[]) : []);
  const options: { field: string; kind: Corruption['kind'] }[] = [];
  for (const field of Object.keys(args).sort()) {
    if (wrongTypeFor(args[field]!) !== undefined) options.push({ field, kind: 'wrong_type' });
    if (required.has(field)) options.push({ field, kind: 'missing_required' });
  }
  if (options.length === 0) return undefined;
  // Prefer a wrongly typed value, the commonest small-model mistake, three to one.
  const typed = options.filter((option) => option.kind === 'wrong_type');
  const pool = typed.length > 0 && random.chance(0.75) ? typed : options;
  const choice = random.pick(pool);
  const corrupted: JsonObject = { ...args };
  if (choice.kind === 'wrong_type') corrupted[choice.field] = wrongTypeFor(args[choice.field]!)!;
  else delete corrupted[choice.field];
  return { field: choice.field, kind: choice.kind, arguments: corrupted };
}
