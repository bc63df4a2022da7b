// Owns whether the world a record was made on is the one installed here, as
// far as the world can say: a server world's record names the package and
// lockfile integrity that served it, and replay needs that exact copy. A
// scripted world is this code itself (the factory's version covers it).
// Replay asks this instead of asking what kind of world it has.

import { isServerWorld } from './server-world.js';
import { installedPackage } from './servers/server-package.js';
import { findWorld } from './world-registry.js';

/** Why this machine cannot serve the world a record's world actor names, or undefined when it can (or the world is not one it knows). */
export function installedWorldMismatch(worldName: string, actor: Readonly<Record<string, unknown>>): string | undefined {
  if (typeof actor.package !== 'string') return undefined;
  const world = findWorld(worldName);
  if (!world || !isServerWorld(world) || world.resolveEntry) return undefined;
  const installed = installedPackage(world.package);
  // A program found on PATH has no lockfile to hold it to; the record still names it.
  const integrity = world.program ? world.program().integrity : installed.integrity;
  if (integrity === 'command') return undefined;
  const here = `${world.package.name}@${installed.version}`;
  if (actor.package === here && actor.integrity === integrity) return undefined;
  return (
    `served by ${actor.package} (integrity ${String(actor.integrity)}), but this machine has ${here} (integrity ${integrity}); ` +
    'replay it with the package that served it (check out that release and run npm ci)'
  );
}
