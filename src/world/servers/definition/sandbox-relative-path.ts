// Owns the reading of a definition's relative paths (a probe part's file or
// tree): resolved against the sandbox root and refused when they leave it,
// so a definition can never make the factory read outside its sandbox.

import { isAbsolute, relative, resolve, sep } from 'node:path';
import { FactoryError } from '../../../core/errors.js';

/** The absolute path of `relativePath` under `root`; `where` names the field in the error. */
export function resolveUnderRoot(root: string, relativePath: string, where: string): string {
  const full = resolve(root, relativePath || '.');
  const offset = relative(resolve(root), full);
  if (isAbsolute(relativePath) || offset.split(sep)[0] === '..' || isAbsolute(offset)) {
    throw new FactoryError('definition_invalid', `${where}: the path "${relativePath}" is not inside the sandbox root`, {
      fix: 'give a path relative to the root, such as "." or "notes/todo.md"',
    });
  }
  return full;
}
