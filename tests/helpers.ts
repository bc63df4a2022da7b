// Shared test helpers: temporary directories that clean themselves up, and the
// repository's own paths.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
export const CLI = join(REPO_ROOT, 'bin', 'episode-factory.js');

export function temporaryDirectory(prefix = 'ef-test-'): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}
