// Owns probe views: the named selections a definition makes of its own
// snapshot so lanes can name them (`open_notes` rather than a walk through
// the file tree): items of a list or values of a map at a pointer, filtered
// by the lanes' where clause, cut down to some fields, optionally keyed.

import { canonicalJson } from '../../../core/canonical-json.js';
import { FactoryError } from '../../../core/errors.js';
import type { JsonObject, JsonValue } from '../../../core/json-value.js';
import { parsePointer } from '../../../core/json-pointer.js';
import { collectionAt, fieldValue, matchesWhere } from '../../../core/where-clause.js';
import type { ViewDefinition } from './server-world-definition.js';

/** Only the listed dotted fields of `item`, nested as they are in it; a field the item lacks is left out. */
export function selectFields(item: unknown, fields: string[]): JsonValue {
  const selected: JsonObject = {};
  for (const field of fields) {
    const { found, value } = fieldValue(item, field);
    if (!found) continue;
    const segments = field.split('.');
    let target = selected;
    for (const segment of segments.slice(0, -1)) {
      const next = target[segment];
      target = (typeof next === 'object' && next !== null && !Array.isArray(next) ? next : (target[segment] = {})) as JsonObject;
    }
    target[segments[segments.length - 1]!] = value as JsonValue;
  }
  return selected;
}

function keyText(value: unknown): string {
  return typeof value === 'string' ? value : canonicalJson(value);
}

/**
 * Adds each view to `snapshot` under its name (a later view may read an
 * earlier one). A view keyed by a field: items without it are left out, the
 * first of two items with one key wins and `<view>_duplicate_keys` lists the
 * keys seen twice, so the clash shows instead of hiding.
 */
export function addViews(snapshot: JsonObject, views: ViewDefinition[], where: string, partNames: ReadonlySet<string>): void {
  const names = new Set(partNames);
  for (const view of views) {
    for (const name of view.key ? [view.name, `${view.name}_duplicate_keys`] : [view.name]) {
      if (names.has(name)) {
        throw new FactoryError('definition_invalid', `${where}: the view "${view.name}" puts "${name}" in the snapshot, which a probe part or an earlier view already names`, {
          fix: 'give each part and view of the probe its own name',
        });
      }
      names.add(name);
    }
  }
  const readable = new Set(partNames);
  for (const view of views) {
    let first: string | undefined;
    try {
      first = parsePointer(view.from)[0];
    } catch {
      first = undefined;
    }
    if (first === undefined || !readable.has(first)) {
      throw new FactoryError('definition_invalid', `${where}: the view "${view.name}" reads from "${view.from}", which names no probe part or earlier view`, {
        fix: `start "from" with a part's name, e.g. "/${Object.keys(snapshot)[0] ?? 'files'}/files"`,
      });
    }
    // A part that found nothing (a missing file, a failed command) gives an empty view, not an error.
    const items = (collectionAt(snapshot, view.from) ?? []).filter((item) => matchesWhere(item, view.where));
    const shaped = (item: unknown): JsonValue => (view.select ? selectFields(item, view.select) : (item as JsonValue));
    readable.add(view.name);
    if (!view.key) {
      snapshot[view.name] = items.map(shaped);
      continue;
    }
    const keyed: JsonObject = {};
    const duplicates: string[] = [];
    for (const item of items) {
      const { found, value } = fieldValue(item, view.key);
      if (!found || value === null) continue;
      const key = keyText(value);
      if (Object.prototype.hasOwnProperty.call(keyed, key)) {
        if (!duplicates.includes(key)) duplicates.push(key);
        continue;
      }
      keyed[key] = shaped(item);
    }
    snapshot[view.name] = keyed;
    if (duplicates.length > 0) snapshot[`${view.name}_duplicate_keys`] = duplicates;
  }
}
