// Owns a server world's sandbox on disk: a private temporary directory made
// fresh per episode, holding the root the server works in and a home
// directory for the child, removed afterwards. The private directory shows to
// the model as `/`, so no machine-specific path reaches a record.

import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

export interface Sandbox {
  /** Our private temporary directory holding the root; shows to the model as `/`. */
  base: string;
  /** The directory the server works in; shows to the model as the world's shownRoot. */
  root: string;
}

const HOME = 'home';

/** `<tmp>/episode-factory-<world>-XXXXXX/{root,home}`, realpath'd: servers realpath their directories, so results would otherwise carry another prefix. */
export async function createSandbox(world: string, rootName = 'sandbox', parent = tmpdir()): Promise<Sandbox> {
  await mkdir(parent, { recursive: true });
  const base = await realpath(await mkdtemp(join(parent, `episode-factory-${world}-`)));
  const root = join(base, rootName);
  await mkdir(root);
  await mkdir(join(base, HOME));
  return { base, root };
}

/** The child's HOME as the model sees it (`base` shows as `/`): where a path argument starting with `~` points. */
export const SHOWN_HOME = `/${HOME}`;

export function sandboxHome(sandbox: Sandbox): string {
  return join(sandbox.base, HOME);
}

/**
 * Other spellings of the sandbox's private directory than its realpath: the
 * one under TMPDIR as this process gives it, where TMPDIR goes through a
 * symlink (macOS: /tmp and /var/folders live under /private).
 */
export function sandboxAliases(sandbox: Sandbox): string[] {
  const given = resolve(tmpdir(), basename(sandbox.base));
  return given === sandbox.base ? [] : [given];
}

export async function removeSandbox(sandbox: Sandbox): Promise<void> {
  await rm(sandbox.base, { recursive: true, force: true, maxRetries: 3 });
}
