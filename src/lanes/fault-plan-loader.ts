// Owns reading a standalone fault plan file (for the proxy): UTF-8 JSON
// within the limits of a definition file, then
// schemas/fault-plan.v1.schema.json, then the checks a schema cannot make,
// with every problem listed by file and JSON pointer.

import { existsSync } from 'node:fs';
import { JsonLimitError } from '../core/bounded-json.js';
import { FactoryError, type Problem } from '../core/errors.js';
import { InvalidUtf8Error } from '../core/utf8-text.js';
import { formatPointer } from '../core/json-pointer.js';
import { validateAgainst } from '../records/schema-registry.js';
import type { FaultPlan } from '../world/faults/fault-plan.js';
import { limitReason, readDefinitionFile } from '../core/definition-file.js';
import { checkFaultPlan } from './lane-checks.js';

export function loadFaultPlan(path: string): FaultPlan {
  if (!existsSync(path)) {
    throw new FactoryError('plan_invalid', `fault plan ${path} does not exist`, { fix: 'pass a plan file, e.g. --faults lanes/plans/chaos.json' });
  }
  let document: unknown;
  try {
    document = readDefinitionFile(path);
  } catch (error) {
    if (error instanceof InvalidUtf8Error) {
      throw new FactoryError('plan_invalid', `fault plan ${path} is not UTF-8: ${error.message}`, { fix: 're-save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)' });
    }
    if (error instanceof JsonLimitError) {
      throw new FactoryError('plan_invalid', `fault plan ${path} ${limitReason(error, 'a fault plan')}`, {
        fix: error.limit === 'depth' ? "a fault plan nests a few levels: flatten its deepest value (a fault's params)" : 'a fault plan is a few kilobytes: keep only the faults it injects',
      });
    }
    throw new FactoryError('plan_invalid', `fault plan ${path} is not valid JSON: ${(error as Error).message}`, { fix: 'fix the JSON syntax' });
  }
  const problems: Problem[] = validateAgainst('fault-plan.v1', document).map((error) => ({ where: `${path}: ${error.path || '/'}`, reason: error.reason }));
  if (problems.length === 0) {
    checkFaultPlan(document as FaultPlan, [], undefined, (tokens, reason) => problems.push({ where: `${path}: ${formatPointer(tokens)}`, reason }));
  }
  if (problems.length > 0) {
    throw new FactoryError('plan_invalid', `${path} is not a valid fault plan (${problems.length} problem${problems.length === 1 ? '' : 's'})`, {
      fix: 'fix each problem listed above; the format is schemas/fault-plan.v1.schema.json',
      problems,
    });
  }
  return document as FaultPlan;
}
