// Owns the small template language used in lanes: `{{name.path}}` inside
// strings. A path walks object fields and array indexes; `*` maps over an
// array. A string that is exactly one `{{...}}` keeps the value's type (so a
// template can yield the integer 4821); anything else is rendered to text, with
// lists joined by ", ".

import { canonicalJson } from './canonical-json.js';

const EXPRESSION = /\{\{\s*([^{}]+?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]+?)\s*\}\}$/;
const SEGMENT = /^(\*|[0-9]+|[A-Za-z_][A-Za-z0-9_-]*)$/;
const FIELD = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Can a template's path name this key as a field (`{{target.front_matter}}`)? A key with a dot or a space cannot. */
export function isTemplateField(key: string): boolean {
  return FIELD.test(key);
}

export class TemplateError extends Error {
  readonly expression: string;
  constructor(expression: string, reason: string) {
    super(`{{${expression}}}: ${reason}`);
    this.name = 'TemplateError';
    this.expression = expression;
  }
}

export function parseExpression(expression: string): string[] {
  const segments = expression.split('.');
  for (const segment of segments) {
    if (!SEGMENT.test(segment)) throw new TemplateError(expression, `bad path segment ${JSON.stringify(segment)}`);
  }
  if (segments[0] === '*' || /^[0-9]/.test(segments[0]!)) {
    throw new TemplateError(expression, 'must start with a name');
  }
  return segments;
}

/** Root names referenced by every expression in a string (for lane checks). */
export function templateRoots(text: string): string[] {
  const roots: string[] = [];
  for (const match of text.matchAll(EXPRESSION)) {
    roots.push(parseExpression(match[1]!)[0]!);
  }
  return roots;
}

export function evaluateExpression(expression: string, context: Readonly<Record<string, unknown>>): unknown {
  const segments = parseExpression(expression);
  const [root, ...rest] = segments;
  if (!Object.prototype.hasOwnProperty.call(context, root!)) {
    throw new TemplateError(expression, `unknown name "${root}" (known: ${Object.keys(context).sort().join(', ') || 'none'})`);
  }
  return walk(context[root!], rest, expression);
}

function walk(value: unknown, segments: readonly string[], expression: string): unknown {
  if (segments.length === 0) return value;
  const [segment, ...rest] = segments;
  if (segment === '*') {
    if (!Array.isArray(value)) throw new TemplateError(expression, '"*" applied to a value that is not a list');
    return value.map((item) => walk(item, rest, expression));
  }
  if (Array.isArray(value) && /^[0-9]+$/.test(segment!)) {
    const index = Number(segment);
    if (index >= value.length) throw new TemplateError(expression, `index ${index} past the end of a list of ${value.length}`);
    return walk(value[index], rest, expression);
  }
  if (typeof value === 'object' && value !== null && Object.prototype.hasOwnProperty.call(value, segment!)) {
    return walk((value as Record<string, unknown>)[segment!], rest, expression);
  }
  throw new TemplateError(expression, `no field "${segment}"`);
}

export function renderText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return value.map(renderText).join(', ');
  return canonicalJson(value);
}

export interface RenderOptions {
  /**
   * Leave expressions whose root name is not in the context untouched, so a
   * template can be rendered in two stages (lane parameters first, then the
   * results a policy sees during the episode).
   */
  partial?: boolean;
}

function isDeferred(expression: string, context: Readonly<Record<string, unknown>>, options: RenderOptions): boolean {
  return options.partial === true && !Object.prototype.hasOwnProperty.call(context, parseExpression(expression)[0]!);
}

/**
 * Values substituted in a first, partial stage must never be read as
 * templates by the second: a world value containing "{{…}}" is data. They are
 * marked in between and the mark is removed when rendering completes.
 */
const INERT = '\uF8FF';

function inert(value: unknown): unknown {
  if (typeof value === 'string') return value.split('{{').join(`{${INERT}{`);
  if (Array.isArray(value)) return value.map(inert);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inert(item)]));
  return value;
}

/** Renders one string; a lone expression keeps its value's type. */
export function renderTemplate(template: string, context: Readonly<Record<string, unknown>>, options: RenderOptions = {}): unknown {
  const whole = WHOLE.exec(template);
  if (whole) {
    if (isDeferred(whole[1]!, context, options)) return template;
    const value = evaluateExpression(whole[1]!, context);
    return options.partial ? inert(value) : value;
  }
  const rendered = template.replace(EXPRESSION, (match, expression: string) => {
    if (isDeferred(expression, context, options)) return match;
    const text = renderText(evaluateExpression(expression, context));
    return options.partial ? (inert(text) as string) : text;
  });
  return options.partial ? rendered : rendered.split(INERT).join('');
}

export function renderString(template: string, context: Readonly<Record<string, unknown>>): string {
  return renderText(renderTemplate(template, context));
}

/** Renders every string inside a JSON-like value. */
export function renderDeep(value: unknown, context: Readonly<Record<string, unknown>>, options: RenderOptions = {}): unknown {
  if (typeof value === 'string') return renderTemplate(value, context, options);
  if (Array.isArray(value)) return value.map((item) => renderDeep(item, context, options));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = renderDeep(item, context, options);
    return out;
  }
  return value;
}

/** Every expression (`target.number`) referenced anywhere inside a JSON-like value. */
export function templateExpressions(value: unknown): string[] {
  if (typeof value === 'string') {
    return [...value.matchAll(EXPRESSION)].map((match) => {
      parseExpression(match[1]!);
      return match[1]!;
    });
  }
  if (Array.isArray(value)) return value.flatMap(templateExpressions);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(templateExpressions);
  return [];
}

/** Every root name referenced anywhere inside a JSON-like value. */
export function deepTemplateRoots(value: unknown): string[] {
  if (typeof value === 'string') return templateRoots(value);
  if (Array.isArray(value)) return value.flatMap(deepTemplateRoots);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(deepTemplateRoots);
  return [];
}
