// Owns a defined world's kept child (`launch.keep: {"kind": "swapped-link"}`):
// the child is started once per thread on a link inside its own directory,
// and before each episode the link is swapped (a new symlink renamed over it,
// atomic) to the episode's root, then the declared re-point calls clear what
// the server remembers of the last episode (git-mcp-server's session working
// directory). The calls go over the pool's management channel, never into a
// record. A connection to the child shows the link's path as the root
// (linked-root.ts), so its records are the bytes a fresh child's would be.

import { mkdirSync } from 'node:fs';
import { cp, rename, rm, symlink } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { FactoryError } from '../../../core/errors.js';
import type { JsonObject } from '../../../core/json-value.js';
import type { PopulateContext, ServerLaunch, ServerReuse } from '../../server-world.js';
import { throughLink } from '../linked-root.js';
import type { Normalisation } from '../normalising-transport.js';
import type { Sandbox } from '../sandbox.js';
import type { KeepDefinition } from './server-world-definition.js';

type SwappedLink = Extract<KeepDefinition, { kind: 'swapped-link' }>;

export interface SwappedLinkWorld {
  name: string;
  /** The definition file, for messages. */
  where: string;
  /** The root's name on disk (the shown root's last component). */
  rootName: string;
  /** The fresh child's launch line, unsubstituted: what the kept child's falls back to. */
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /** Fills the placeholders of a launch line for a root and home. */
  placeholders(text: string, at: { root: string; home: string; link: string }, pinnedDate: string): string;
  /** The world's rules for a sandbox, of which the sandbox-path rule is shown through the link. */
  normalisations(sandbox: Sandbox, pinnedDate: string): Normalisation[];
}

/** Where the link lives in a child's directory; a `link` that leaves it is refused. */
export function linkPath(keep: SwappedLink, rootName: string, childDirectory: string, where: string): string {
  const link = resolve(childDirectory, keep.link ?? join('current', rootName));
  const inside = relative(childDirectory, link);
  if (inside === '' || inside.startsWith('..') || inside.startsWith('/')) {
    throw new FactoryError('definition_invalid', `/launch/keep/link of ${where} ("${keep.link}") leaves the kept child's directory`, { fix: 'give a relative path inside it, e.g. "current/<the root\'s name>"' });
  }
  return link;
}

export function swappedLinkReuse(keep: SwappedLink, world: SwappedLinkWorld): ServerReuse {
  /** Children already pointed at a sandbox once: a new child has nothing of an earlier episode to clear. */
  const repointed = new Set<string>();
  const home = (childDirectory: string) => join(childDirectory, 'home');
  return {
    launch(childDirectory: string, context: PopulateContext): ServerLaunch {
      const link = linkPath(keep, world.rootName, childDirectory, world.where);
      mkdirSync(dirname(link), { recursive: true });
      const at = { root: link, home: home(childDirectory), link };
      const env = { ...world.env, ...(keep.env ?? {}) };
      return {
        args: (keep.args ?? world.args).map((argument) => world.placeholders(argument, at, context.pinnedDate)),
        env: Object.fromEntries(Object.entries(env).map(([name, value]) => [name, world.placeholders(value, at, context.pinnedDate)])),
      };
    },
    async prepare(sandbox, childDirectory) {
      // The child starts on a copy of its first sandbox's root beside the link: a server may check its directory as it starts (obsidian-mcp: a .obsidian folder, and a realpath whose parent is the path's), and a link straight to the sandbox has another parent.
      const link = linkPath(keep, world.rootName, childDirectory, world.where);
      const waiting = join(dirname(link), `${basename(link)}-waiting`);
      await rm(waiting, { recursive: true, force: true });
      await cp(sandbox.root, waiting, { recursive: true, verbatimSymlinks: true });
      await rm(link, { force: true });
      await symlink(waiting, link);
    },
    async repoint(channel, sandbox, childDirectory) {
      const link = linkPath(keep, world.rootName, childDirectory, world.where);
      const first = !repointed.has(childDirectory);
      // A new child checks its directory as it starts (obsidian-mcp: the realpath's parent must be the path's); its answer to a ping says it is done.
      if (first) await channel.request('ping');
      const next = join(dirname(link), `${basename(link)}.next`);
      await rm(next, { force: true });
      await symlink(sandbox.root, next);
      await rename(next, link);
      if (first) {
        repointed.add(childDirectory);
        return;
      }
      for (const call of keep.repoint_calls ?? []) {
        const result = await channel.request('tools/call', { name: call.tool, arguments: (call.arguments ?? {}) as JsonObject });
        if (result.isError === true) {
          const said = JSON.stringify(result.content ?? result).slice(0, 300);
          throw new FactoryError('server_failed', `the ${world.name} world's kept child refused the re-point call ${call.tool}: ${said}`, {
            fix: `check /launch/keep/repoint_calls of ${world.where}, or set EPISODE_FACTORY_FRESH_SERVERS=1 for a child per connection`,
          });
        }
      }
    },
    normalisations(childDirectory, sandbox, pinnedDate) {
      const link = linkPath(keep, world.rootName, childDirectory, world.where);
      return world.normalisations(sandbox, pinnedDate).map((rule) => (rule.id === 'sandbox-path' ? throughLink(rule, sandbox.root, link) : rule));
    },
  };
}
