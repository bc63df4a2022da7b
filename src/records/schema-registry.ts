// Owns the factory's own JSON Schemas (schemas/*.schema.json): loading them
// once, compiling them strictly, and validating every file the factory writes
// or reads against them.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCHEMAS_DIR } from '../core/package-paths.js';
import { compileValidator, type FieldError, type Validator } from '../core/schema-validator.js';

export type SchemaName = 'lane.v1' | 'episode-record.v1' | 'rejected-row.v1' | 'manifest.v1';

const validators = new Map<SchemaName, Validator>();

export function schemaPath(name: SchemaName): string {
  return join(SCHEMAS_DIR, `${name}.schema.json`);
}

export function loadSchema(name: SchemaName): object {
  return JSON.parse(readFileSync(schemaPath(name), 'utf8')) as object;
}

/** Errors as JSON pointers into the value; empty when it is valid. */
export function validateAgainst(name: SchemaName, value: unknown): FieldError[] {
  let validate = validators.get(name);
  if (!validate) {
    validate = compileValidator(loadSchema(name), { strict: true, pointers: true });
    validators.set(name, validate);
  }
  return validate(value);
}
