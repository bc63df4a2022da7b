// Owns the factory's own JSON Schemas (schemas/*.schema.json): loading them
// once, registering them together so they can reference each other by $id,
// compiling them strictly, and validating every file the factory writes or
// reads against them.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCHEMAS_DIR } from '../core/package-paths.js';
import { compileRegistered, type FieldError, type Validator } from '../core/schema-validator.js';

export type SchemaName = 'lane.v1' | 'episode-record.v1' | 'rejected-row.v1' | 'manifest.v1' | 'fault-plan.v1' | 'rewrites.v1';

const validators = new Map<SchemaName, Validator>();
let all: (object & { $id: string })[] | undefined;

export function schemaPath(name: SchemaName): string {
  return join(SCHEMAS_DIR, `${name}.schema.json`);
}

export function loadSchema(name: SchemaName): object & { $id: string } {
  return JSON.parse(readFileSync(schemaPath(name), 'utf8')) as object & { $id: string };
}

function allSchemas(): (object & { $id: string })[] {
  all ??= readdirSync(SCHEMAS_DIR)
    .filter((file) => file.endsWith('.schema.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(join(SCHEMAS_DIR, file), 'utf8')) as object & { $id: string });
  return all;
}

/** Errors as JSON pointers into the value; empty when it is valid. */
export function validateAgainst(name: SchemaName, value: unknown): FieldError[] {
  let validate = validators.get(name);
  if (!validate) {
    validate = compileRegistered(allSchemas(), loadSchema(name).$id, { pointers: true });
    validators.set(name, validate);
  }
  return validate(value);
}
