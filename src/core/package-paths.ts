// Owns where the factory's own files live (schemas, built-in lanes) and its
// version, resolved from this module's location so the CLI works from any
// working directory.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SCHEMAS_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));
export const BUILTIN_LANES_DIR = fileURLToPath(new URL('../../lanes/', import.meta.url));

export const FACTORY_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
