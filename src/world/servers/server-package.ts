// Owns finding a server world's pinned package in node_modules: its entry
// file (refusing any version but the pinned one, with the install line as the
// fix) and its lockfile integrity hash, which the record's world actor names
// and replay checks against the installed tree.

import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FactoryError } from '../../core/errors.js';
import type { ServerPackage } from '../server-world.js';

export interface InstalledPackage {
  entry: string;
  version: string;
  /** The lockfile's `integrity` for the installed copy (sha512-…); "unlocked" when no lockfile names it. */
  integrity: string;
}

const installed = new Map<string, InstalledPackage>();

/** What installs a package at exactly this version. */
export function installLine(name: string, version: string): string {
  return `npm install --save-exact ${name}@${version}`;
}

/**
 * The package's package.json where Node would find the package: from the
 * working directory first (a user's project that installed its own server),
 * then from the factory's own. A package whose `exports` leave package.json
 * out (obsidian-mcp) cannot be resolved by that name, so the directories Node
 * searches are looked in directly.
 */
export function packageManifests(name: string, cwd = process.cwd()): string[] {
  const found: string[] = [];
  for (const base of [join(cwd, 'package.json'), fileURLToPath(import.meta.url)]) {
    const require = createRequire(base);
    try {
      found.push(require.resolve(`${name}/package.json`));
    } catch {
      const directory = (require.resolve.paths(name) ?? []).find((candidate) => existsSync(join(candidate, name, 'package.json')));
      if (directory) found.push(realpathSync(join(directory, name, 'package.json')));
    }
  }
  return [...new Set(found)];
}

function versionOf(manifestPath: string): string | undefined {
  return (JSON.parse(readFileSync(manifestPath, 'utf8')) as { version?: string }).version;
}

/** The installed package, refusing any version but the pinned one. */
export function installedPackage(pkg: ServerPackage): InstalledPackage {
  const key = `${pkg.name}@${pkg.version}`;
  const known = installed.get(key);
  if (known) return known;
  const manifests = packageManifests(pkg.name);
  if (manifests.length === 0) {
    throw new FactoryError('server_package', `the server world needs ${pkg.name}@${pkg.version}, which is not installed`, { fix: installLine(pkg.name, pkg.version) });
  }
  // The working directory's copy first, the factory's next: the first at the pinned version serves.
  const manifestPath = manifests.find((path) => versionOf(path) === pkg.version);
  if (manifestPath === undefined) {
    throw new FactoryError('server_package', `${pkg.name} is installed at ${manifests.map(versionOf).join(' and ')}, but the world is pinned to ${pkg.version}`, { fix: installLine(pkg.name, pkg.version) });
  }
  const directory = dirname(manifestPath);
  const found: InstalledPackage = { entry: join(directory, pkg.entry), version: pkg.version, integrity: lockedIntegrity(directory, pkg.name) };
  installed.set(key, found);
  return found;
}

/**
 * The integrity npm recorded for the package: from the project's
 * package-lock.json, else npm's hidden node_modules/.package-lock.json (which
 * an install without a project lockfile still writes).
 */
function lockedIntegrity(packageDirectory: string, name: string): string {
  const marker = `/node_modules/${name}`;
  const at = packageDirectory.lastIndexOf(marker);
  if (at === -1) return 'unlocked';
  const project = packageDirectory.slice(0, at);
  for (const lock of [join(project, 'package-lock.json'), join(project, 'node_modules', '.package-lock.json')]) {
    if (!existsSync(lock)) continue;
    try {
      const parsed = JSON.parse(readFileSync(lock, 'utf8')) as { packages?: Record<string, { integrity?: string }> };
      const integrity = parsed.packages?.[`node_modules/${name}`]?.integrity;
      if (integrity) return integrity;
    } catch {
      // An unreadable lockfile names nothing; try the next.
    }
  }
  return 'unlocked';
}
