// Owns a server world's sandbox on disk: a private temporary directory made
// fresh per episode, holding the root the server works in and a home
// directory for the child, removed afterwards. The private directory shows to
// the model as `/`, so no machine-specific path reaches a record.

import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../server-world.js';

/** `<tmp>/episode-factory-<world>-XXXXXX/{root,home}`, realpath'd: servers realpath their directories, so results would otherwise carry another prefix. */
export async function createSandbox(world: string, rootName = 'sandbox'): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), `episode-factory-${world}-`)));
  const root = join(base, rootName);
  await mkdir(root);
  await mkdir(join(base, 'home'));
  return { base, root };
}

export function sandboxHome(sandbox: Sandbox): string {
  return join(sandbox.base, 'home');
}

export async function removeSandbox(sandbox: Sandbox): Promise<void> {
  await rm(sandbox.base, { recursive: true, force: true, maxRetries: 3 });
}
