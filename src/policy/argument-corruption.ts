// Owns the deliberate argument mistakes of the `wrong_type_first` variant: the
// kinds of error small models make (a number spelled as a word or quoted, a
// list flattened to a string, a required field left out), chosen by reading the
// tool's schema from the catalog, exactly as a model would see it.

import type { ToolDescriptor } from '../core/conversation.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json-value.js';
import type { Random } from '../core/random.js';

export interface Corruption {
  /** The first field got wrong (of `fields`). */
  field: string;
  kind: 'wrong_type' | 'missing_required';
  fields: string[];
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

/**
 * Returns a copy of `args` with up to `count` fields got wrong, or undefined
 * when nothing can be corrupted.
 */
export function corruptArguments(tool: ToolDescriptor | undefined, args: unknown, random: Random, count = 1): Corruption | undefined {
  if (!tool || !isJsonObject(args)) return undefined;
  const required = new Set(Array.isArray(tool.input_schema.required) ? (tool.input_schema.required as string[]) : []);
  const options: { field: string; kind: Corruption['kind'] }[] = [];
  for (const field of Object.keys(args).sort()) {
    if (wrongTypeFor(args[field]!) !== undefined) options.push({ field, kind: 'wrong_type' });
    if (required.has(field)) options.push({ field, kind: 'missing_required' });
  }
  if (options.length === 0) return undefined;
  const corrupted: JsonObject = { ...args };
  const chosen: { field: string; kind: Corruption['kind'] }[] = [];
  while (chosen.length < count) {
    const remaining = options.filter((option) => !chosen.some((taken) => taken.field === option.field));
    if (remaining.length === 0) break;
    // Prefer a wrongly typed value, the commonest small-model mistake, three to one.
    const typed = remaining.filter((option) => option.kind === 'wrong_type');
    const choice = random.pick(typed.length > 0 && random.chance(0.75) ? typed : remaining);
    if (choice.kind === 'wrong_type') corrupted[choice.field] = wrongTypeFor(args[choice.field]!)!;
    else delete corrupted[choice.field];
    chosen.push(choice);
  }
  return { field: chosen[0]!.field, kind: chosen[0]!.kind, fields: chosen.map((choice) => choice.field), arguments: corrupted };
}
