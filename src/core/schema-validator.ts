// Owns JSON Schema validation (Ajv, draft 2020-12, every error collected) and
// the translation of Ajv's errors into `{path, reason}` pairs a model or a user
// can act on. Validators are compiled once per distinct schema and reused.

import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv as AjvDraft07 } from 'ajv';
import addFormats from 'ajv-formats';
import { canonicalJson } from './canonical-json.js';

export interface FieldError {
  /** Dotted path into the value (`fields.due_on`, `labels[1]`); `(root)` for the value itself. */
  path: string;
  reason: string;
}

export type Validator = (value: unknown) => FieldError[];

function createAjv(strict: boolean): Ajv2020 {
  // Strict catches unknown keywords and bad formats in our own schemas; the
  // required-in-oneOf and implicit-type styles it would also reject are ones
  // draft 2020-12 allows and our schemas use on purpose.
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    strict,
    strictRequired: false,
    strictTypes: false,
    strictTuples: false,
    validateFormats: true,
  });
  addFormats.default(ajv);
  return ajv;
}

/** Tool schemas come from servers we do not control: tolerate unknown keywords. */
const lenient = createAjv(false);
/**
 * Real third-party servers (server-filesystem, server-memory) declare
 * `"$schema": "http://json-schema.org/draft-07/schema#"` on their tool
 * schemas, which the 2020-12 instance does not know: those compile here.
 */
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
let lenientDraft07: AjvDraft07 | undefined;
function draft07(): AjvDraft07 {
  if (!lenientDraft07) {
    lenientDraft07 = new AjvDraft07({ allErrors: true, verbose: true, strict: false, validateFormats: true });
    addFormats.default(lenientDraft07);
  }
  return lenientDraft07;
}
/** The factory's own file schemas: a typo in them is a bug to catch. */
const strictAjv = createAjv(true);
const cache = new Map<string, ValidateFunction>();

export interface CompileOptions {
  /** For the factory's own schemas: unknown keywords are errors. */
  strict?: boolean;
  /** Report locations as JSON pointers (`/tasks/0/id`) rather than dotted paths. */
  pointers?: boolean;
}

/**
 * The same schema object asks again (a tool listed the same way in every
 * episode): found by identity before its canonical text is worked out. Ajv
 * itself caches compiled schemas by object, so this is its own notion of same.
 */
const byObject = { strict: new WeakMap<object, ValidateFunction>(), lenient: new WeakMap<object, ValidateFunction>() };

export function compileValidator(schema: object, options: CompileOptions = {}): Validator {
  const strict = options.strict ?? false;
  const style = options.pointers ? 'pointer' : 'dotted';
  const known = strict ? byObject.strict : byObject.lenient;
  let validate = known.get(schema);
  if (!validate) {
    const key = (strict ? 'S' : 'L') + canonicalJson(schema);
    validate = cache.get(key);
    if (!validate) {
      const declared = (schema as { $schema?: unknown }).$schema;
      validate = !strict && typeof declared === 'string' && DRAFT_07.test(declared) ? draft07().compile(schema) : (strict ? strictAjv : lenient).compile(schema);
      cache.set(key, validate);
    }
    known.set(schema, validate);
  }
  const compiled = validate;
  return (value) => (compiled(value) ? [] : toFieldErrors(compiled.errors ?? [], style));
}

/**
 * The factory's own schemas reference each other by `$id`; they are added to
 * the strict instance together and compiled by id.
 */
export function compileRegistered(schemas: readonly (object & { $id: string })[], id: string, options: Omit<CompileOptions, 'strict'> = {}): Validator {
  for (const schema of schemas) {
    if (!strictAjv.getSchema(schema.$id)) strictAjv.addSchema(schema);
  }
  const compiled = strictAjv.getSchema(id);
  if (!compiled) throw new Error(`no schema with $id ${id}`);
  const style = options.pointers ? 'pointer' : 'dotted';
  return (value) => (compiled(value) ? [] : toFieldErrors(compiled.errors ?? [], style));
}

export function toFieldErrors(errors: readonly ErrorObject[], style: 'dotted' | 'pointer' = 'dotted'): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  // anyOf/oneOf report each branch's failure and then a summary; the branches
  // are noise to a caller, so keep only the summary for those locations.
  const branchParents = new Set(
    errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf').map((error) => error.instancePath),
  );
  for (const error of errors) {
    if (error.keyword !== 'anyOf' && error.keyword !== 'oneOf' && branchParents.has(error.instancePath) && error.schemaPath.includes('Of/')) {
      continue;
    }
    const entry = describe(error, style);
    const key = entry.path + '\u0000' + entry.reason;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(entry);
  }
  return out;
}

function describe(error: ErrorObject, style: 'dotted' | 'pointer'): FieldError {
  const base = style === 'pointer' ? error.instancePath : instancePathToDotted(error.instancePath);
  const join = (parent: string, field: string): string =>
    style === 'pointer' ? `${parent}/${field.replace(/~/g, '~0').replace(/\//g, '~1')}` : parent ? `${parent}.${field}` : field;
  const root = style === 'pointer' ? '' : '(root)';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      // Tool arguments are "arguments" to a model; fields of our own files are "fields".
      return { path: join(base, String(params.missingProperty)), reason: style === 'pointer' ? 'missing required field' : 'missing required argument' };
    case 'additionalProperties':
      return { path: join(base, String(params.additionalProperty)), reason: 'unknown field' };
    case 'unevaluatedProperties':
      return { path: join(base, String(params.unevaluatedProperty)), reason: 'unknown field' };
    case 'type':
      return { path: base || root, reason: `expected ${String(params.type).replace(/,/g, ' or ')}, got ${typeName(error.data)}` };
    case 'enum':
      return { path: base || root, reason: `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}` };
    case 'const':
      return { path: base || root, reason: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path: base || root, reason: `must be ${params.comparison} ${params.limit}` };
    case 'minLength':
      return { path: base || root, reason: `must be at least ${params.limit} characters` };
    case 'maxLength':
      return { path: base || root, reason: `must be at most ${params.limit} characters` };
    case 'minItems':
      return { path: base || root, reason: `must have at least ${params.limit} items` };
    case 'maxItems':
      return { path: base || root, reason: `must have at most ${params.limit} items` };
    case 'minProperties':
      return { path: base || root, reason: `must have at least ${params.limit} fields` };
    case 'uniqueItems':
      return { path: base || root, reason: `must not repeat items (items ${params.j} and ${params.i} are equal)` };
    case 'format':
      return { path: base || root, reason: `must be a valid ${params.format}` };
    case 'pattern':
      return { path: base || root, reason: `must match the pattern ${params.pattern}` };
    default:
      return { path: base || root, reason: error.message ?? error.keyword };
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export function instancePathToDotted(instancePath: string): string {
  if (!instancePath) return '';
  let out = '';
  for (const raw of instancePath.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^[0-9]+$/.test(token)) out += `[${token}]`;
    else out += out ? `.${token}` : token;
  }
  return out;
}

export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors.map((error) => `${error.path}: ${error.reason}`).join('; ');
}
