// Owns the ways the fault layer spoils a correct tool result: structured
// content that breaks the tool's declared output schema, text cut short, and
// text padded past any sane size. Each returns what it did, for the record.

import { isJsonObject, type JsonObject, type JsonValue } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';

export interface Mutation {
  result: JsonObject;
  detail: string;
}

function wrongTypeOf(value: JsonValue): JsonValue {
  if (typeof value === 'string') return 404;
  if (typeof value === 'number') return 'not-a-number';
  if (typeof value === 'boolean') return 'maybe';
  if (Array.isArray(value)) return 'not-a-list';
  return 'not-an-object';
}

export function violateOutputSchema(result: JsonObject, outputSchema: JsonObject | undefined, random: Random): Mutation {
  const structured = result.structuredContent;
  if (!isJsonObject(structured)) {
    return { result, detail: 'no structured content to spoil; result passed unchanged' };
  }
  const required = Array.isArray(outputSchema?.required) ? (outputSchema!.required as string[]).filter((key) => key in structured) : [];
  const spoiled: JsonObject = { ...structured };
  let detail: string;
  if (required.length > 0) {
    const field = random.pick(required.sort());
    if (random.chance(0.5)) {
      delete spoiled[field];
      detail = `removed required field "${field}" from structuredContent`;
    } else {
      spoiled[field] = wrongTypeOf(structured[field]!);
      detail = `set structuredContent field "${field}" to a ${typeof spoiled[field]}`;
    }
  } else {
    spoiled.__unexpected__ = true;
    detail = 'added an undeclared field "__unexpected__" to structuredContent';
  }
  return { result: { ...result, structuredContent: spoiled }, detail };
}

function textOf(result: JsonObject): string {
  const content = Array.isArray(result.content) ? result.content : [];
  return content
    .filter((item): item is JsonObject => isJsonObject(item) && item.type === 'text')
    .map((item) => String(item.text))
    .join('\n');
}

export function cutText(result: JsonObject, keepFraction: number): Mutation {
  const text = textOf(result);
  const keep = Math.max(1, Math.floor(text.length * keepFraction));
  return {
    result: { ...result, content: [{ type: 'text', text: text.slice(0, keep) }] },
    detail: `text cut to ${keep} of ${text.length} characters`,
  };
}

const FILLER_LINE = 'DEBUG upstream trace: cache miss, fetched shard, merged partial results\n';

export function oversize(result: JsonObject, bytes: number): Mutation {
  const filler = FILLER_LINE.repeat(Math.ceil(bytes / FILLER_LINE.length)).slice(0, bytes);
  const content = Array.isArray(result.content) ? result.content : [];
  return {
    result: { ...result, content: [...content, { type: 'text', text: filler }] },
    detail: `padded with ${bytes} bytes of debug output`,
  };
}
