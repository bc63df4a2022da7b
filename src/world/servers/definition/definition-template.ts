// Owns the template language of server world definitions: `{{dotted.path}}`
// with filters after `|`, and the blocks `{{#each list as x}}…{{/each}}` and
// `{{#if name}}…{{else}}…{{/if}}`. The seed program renders file paths, file
// contents and command arguments through it. It is stricter than the lanes'
// templates (src/core/template.ts): a name the scope does not hold is a
// definition error naming the expression, never an empty string, because a
// typo in a definition would otherwise seed a silently wrong world.

import { canonicalJson } from '../../../core/canonical-json.js';
import { FactoryError } from '../../../core/errors.js';
import type { JsonValue } from '../../../core/json-value.js';

export type Scope = Readonly<Record<string, JsonValue>>;

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'expression'; source: string }
  | { kind: 'each'; source: string; list: string; as: string; body: Node[] }
  | { kind: 'if'; source: string; condition: string; then: Node[]; otherwise: Node[] };

const TAG = /\{\{([\s\S]*?)\}\}/g;
const WHOLE = /^\{\{([^{}]*)\}\}$/;
const SEGMENT = /^([0-9]+|[A-Za-z_][A-Za-z0-9_-]*)$/;
const EACH = /^#each\s+(.+?)\s+as\s+([A-Za-z_][A-Za-z0-9_]*)$/;
const IF = /^#if\s+(.+)$/;

function invalid(message: string, fix: string): FactoryError {
  return new FactoryError('definition_invalid', message, { fix });
}

function namesIn(scope: Scope): string {
  return Object.keys(scope).sort().join(', ') || '(none)';
}

// ---------------------------------------------------------------------------
// Parsing.

interface Frame {
  kind: 'root' | 'each' | 'if';
  nodes: Node[];
  node?: Extract<Node, { kind: 'each' | 'if' }>;
  inElse?: boolean;
}

function parse(template: string): Node[] {
  const root: Frame = { kind: 'root', nodes: [] };
  const stack: Frame[] = [root];
  const top = (): Frame => stack[stack.length - 1]!;
  let last = 0;
  for (const match of template.matchAll(TAG)) {
    if (match.index > last) top().nodes.push({ kind: 'text', text: template.slice(last, match.index) });
    last = match.index + match[0].length;
    const inner = match[1]!.trim();
    if (inner.startsWith('#each')) {
      const each = EACH.exec(inner);
      if (!each) throw invalid(`template block "${match[0]}" is not "{{#each LIST as NAME}}"`, 'write {{#each list as item}}…{{/each}}');
      const node: Node = { kind: 'each', source: match[0], list: each[1]!, as: each[2]!, body: [] };
      top().nodes.push(node);
      stack.push({ kind: 'each', nodes: node.body, node });
    } else if (inner.startsWith('#if')) {
      const condition = IF.exec(inner);
      if (!condition) throw invalid(`template block "${match[0]}" is not "{{#if NAME}}"`, 'write {{#if name}}…{{else}}…{{/if}}');
      const node: Node = { kind: 'if', source: match[0], condition: condition[1]!.trim(), then: [], otherwise: [] };
      top().nodes.push(node);
      stack.push({ kind: 'if', nodes: node.then, node });
    } else if (inner === 'else') {
      const frame = top();
      if (frame.kind !== 'if' || frame.inElse) throw invalid(`template "{{else}}" outside an {{#if}} block`, 'use {{else}} once, inside {{#if name}}…{{/if}}');
      frame.inElse = true;
      frame.nodes = (frame.node as Extract<Node, { kind: 'if' }>).otherwise;
    } else if (inner === '/each' || inner === '/if') {
      const frame = top();
      if (frame.kind !== inner.slice(1)) throw invalid(`template "${match[0]}" closes no open {{#${inner.slice(1)}}} block`, 'close each block with its own {{/each}} or {{/if}}');
      stack.pop();
    } else if (inner.startsWith('#') || inner.startsWith('/')) {
      throw invalid(`template block "${match[0]}" is not one of #each, #if, else, /each, /if`, 'use {{#each list as item}}…{{/each}} or {{#if name}}…{{else}}…{{/if}}');
    } else {
      top().nodes.push({ kind: 'expression', source: inner });
    }
  }
  if (last < template.length) top().nodes.push({ kind: 'text', text: template.slice(last) });
  if (stack.length > 1) {
    const open = stack[stack.length - 1]!.node!;
    throw invalid(`template block "${open.source}" is never closed`, `add {{/${open.kind}}}`);
  }
  return root.nodes;
}

// ---------------------------------------------------------------------------
// Expressions: a dotted path, then filters.

/** Splits at `|` outside a JSON-quoted filter argument (`join:" | "`). */
function splitFilters(source: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let index = 0; index < source.length; index++) {
    const character = source[index]!;
    if (quoted && character === '\\') {
      current += character + (source[index + 1] ?? '');
      index++;
      continue;
    }
    if (character === '"') quoted = !quoted;
    if (character === '|' && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  parts.push(current);
  return parts;
}

function lookup(path: string, scope: Scope, expression: string): JsonValue {
  const segments = path.split('.');
  for (const segment of segments) {
    if (!SEGMENT.test(segment)) throw invalid(`template {{${expression}}}: bad path segment ${JSON.stringify(segment)}`, 'write a dotted path of names and list indexes, like note.topic or items.0.name');
  }
  const [root, ...rest] = segments;
  if (!Object.prototype.hasOwnProperty.call(scope, root!)) {
    throw invalid(`template {{${expression}}}: unknown name "${root}" (names in scope: ${namesIn(scope)})`, 'bind the name with a vocabulary or a draw before it is used, or fix its spelling');
  }
  let value: JsonValue = scope[root!]!;
  for (const segment of rest) {
    if (Array.isArray(value) && /^[0-9]+$/.test(segment)) {
      const index = Number(segment);
      if (index >= value.length) throw invalid(`template {{${expression}}}: index ${index} past the end of a list of ${value.length}`, 'index within the list');
      value = value[index]!;
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, segment)) {
      value = value[segment]!;
    } else {
      const fields = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value).sort().join(', ') || '(none)' : `a ${Array.isArray(value) ? 'list' : typeof value}`;
      throw invalid(`template {{${expression}}}: no field "${segment}" (there: ${fields})`, 'name a field the value has');
    }
  }
  return value;
}

export function toText(value: JsonValue): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  return canonicalJson(value);
}

/** A single-quoted SQL literal; numbers stay numbers, null is NULL, booleans 1/0 (SQLite has no boolean). */
export function sqlLiteral(value: JsonValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  return `'${toText(value).split("'").join("''")}'`;
}

/** Lowercase ASCII letters and digits, everything else one `-` (accents dropped first), no `-` at either end. */
export function slug(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function listFor(value: JsonValue, filter: string, expression: string): JsonValue[] {
  if (!Array.isArray(value)) throw invalid(`template {{${expression}}}: filter "${filter}" needs a list, got ${toText(value)}`, `apply ${filter} to a list`);
  return value;
}

function applyFilter(value: JsonValue, filter: string, expression: string): JsonValue {
  const colon = filter.indexOf(':');
  const name = (colon === -1 ? filter : filter.slice(0, colon)).trim();
  const argument = colon === -1 ? undefined : filter.slice(colon + 1);
  if (argument !== undefined && name !== 'join') throw invalid(`template {{${expression}}}: filter "${name}" takes no argument`, `write |${name}`);
  switch (name) {
    case 'lower':
      return toText(value).toLowerCase();
    case 'upper':
      return toText(value).toUpperCase();
    case 'slug':
      return slug(toText(value));
    case 'json':
      return canonicalJson(value);
    case 'sql':
      return sqlLiteral(value);
    case 'join': {
      const separator = joinSeparator(argument, expression);
      return listFor(value, name, expression).map(toText).join(separator);
    }
    case 'count':
      if (typeof value === 'string') return value.length;
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return Object.keys(value).length;
      return listFor(value, name, expression).length;
    case 'first':
    case 'last': {
      const list = listFor(value, name, expression);
      if (list.length === 0) throw invalid(`template {{${expression}}}: filter "${name}" of an empty list`, 'guard it with {{#if list}}…{{/if}}');
      return (name === 'first' ? list[0] : list[list.length - 1])!;
    }
    default:
      throw invalid(`template {{${expression}}}: unknown filter "${name}"`, 'use lower, upper, slug, json, sql, join:SEP, count, first or last');
  }
}

/** `join:SEP` takes SEP as written, or as a JSON string when quoted (for spaces at its ends or a `|`). */
function joinSeparator(argument: string | undefined, expression: string): string {
  if (argument === undefined) return ', ';
  const trimmed = argument.trim();
  if (trimmed.startsWith('"')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === 'string') return parsed;
    } catch {
      // Falls through to the error below.
    }
    throw invalid(`template {{${expression}}}: join's separator ${trimmed} is not a JSON string`, 'write join:", " with the separator as a JSON string');
  }
  return argument;
}

/** The JSON value of one expression (`path|filter|…`) against the scope. */
export function evaluate(expression: string, scope: Scope): JsonValue {
  const [path, ...filters] = splitFilters(expression.trim());
  let value = lookup(path!.trim(), scope, expression.trim());
  for (const filter of filters) value = applyFilter(value, filter.trimStart(), expression.trim());
  return value;
}

function truthy(value: JsonValue): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return value !== false && value !== null && value !== 0 && value !== '';
}

function renderNodes(nodes: readonly Node[], scope: Scope): string {
  let out = '';
  for (const node of nodes) {
    switch (node.kind) {
      case 'text':
        out += node.text;
        break;
      case 'expression':
        out += toText(evaluate(node.source, scope));
        break;
      case 'each': {
        const list = evaluate(node.list, scope);
        if (!Array.isArray(list)) throw invalid(`template block "${node.source}": "${node.list}" is not a list`, 'iterate over a list');
        list.forEach((item, index) => {
          out += renderNodes(node.body, { ...scope, [node.as]: item, index });
        });
        break;
      }
      case 'if':
        out += renderNodes(truthy(evaluate(node.condition, scope)) ? node.then : node.otherwise, scope);
        break;
    }
  }
  return out;
}

/** Renders a template to text; an expression's value shows as text (objects and lists as canonical JSON). */
export function render(template: string, scope: Scope): string {
  return renderNodes(parse(template), scope);
}

/** Renders every string inside a JSON value; a string that is exactly one `{{…}}` expression yields its JSON value. */
export function renderValue(value: JsonValue, scope: Scope): JsonValue {
  if (typeof value === 'string') {
    const inner = WHOLE.exec(value)?.[1]!.trim();
    if (inner !== undefined && inner !== 'else' && !/^[#/]/.test(inner)) return evaluate(inner, scope);
    return render(value, scope);
  }
  if (Array.isArray(value)) return value.map((item) => renderValue(item, scope));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(value)) out[key] = renderValue(item, scope);
    return out;
  }
  return value;
}
