// Owns reading the YAML front matter of a Markdown note (the block between
// two `---` lines at its top, as Obsidian and static site generators write
// it) into JSON for the probe: the subset notes use, read without a YAML
// library so the snapshot cannot change with one. `key: value` is a string
// (quotes removed), `key: [a, b]` and `key:` followed by `  - item` lines are
// lists of strings, a bare `key:` is null and a nested map's indented lines
// are left out. The note's
// title is its first `# ` heading after the block.

import type { JsonObject, JsonValue } from '../../../core/json-value.js';

const KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?:\s+(.*))?$/;
const ITEM = /^\s+-\s+(.*)$/;

/** A scalar as a string: surrounding quotes removed, nothing converted (dates and numbers stay as written). */
function scalar(text: string): string {
  const trimmed = text.trim();
  const quoted = /^"(.*)"$/.exec(trimmed) ?? /^'(.*)'$/.exec(trimmed);
  return quoted ? quoted[1]! : trimmed;
}

function flowList(text: string): JsonValue[] {
  const inner = text.slice(1, -1).trim();
  return inner === '' ? [] : inner.split(',').map(scalar);
}

/**
 * `{title?, meta}` when `lines` open with a `---` block closed by another
 * `---` line; undefined otherwise (the caller reads the note another way).
 */
export function readYamlFrontMatter(lines: readonly string[]): JsonObject | undefined {
  if (lines[0] !== '---') return undefined;
  const end = lines.indexOf('---', 1);
  if (end < 0) return undefined;
  const meta: JsonObject = {};
  // The bare key the `- item` lines that follow belong to.
  let listKey: string | undefined;
  for (const line of lines.slice(1, end)) {
    const item = ITEM.exec(line);
    if (item) {
      if (listKey === undefined) continue;
      const current = meta[listKey];
      (Array.isArray(current) ? current : (meta[listKey] = [])).push(scalar(item[1]!));
      continue;
    }
    const match = KEY.exec(line);
    // An indented line that is not a list item belongs to a nested map, which notes rarely use: left out.
    if (!match) continue;
    const value = (match[2] ?? '').trim();
    listKey = undefined;
    if (value === '') {
      listKey = match[1]!;
      meta[listKey] = null;
    } else if (value.startsWith('[') && value.endsWith(']')) {
      meta[match[1]!] = flowList(value);
    } else {
      meta[match[1]!] = scalar(value);
    }
  }
  const heading = lines.slice(end + 1).find((line) => line.startsWith('# '));
  return heading === undefined ? { meta } : { title: heading.slice(2), meta };
}
