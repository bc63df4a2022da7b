// Owns finding a server world's pinned package in node_modules: its entry
// file (refusing any version but the pinned one, with the install line as the
// fix) and its lockfile integrity hash, which the record's world actor names
// and replay checks against the installed tree.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { FactoryError } from '../../core/errors.js';
import type { ServerPackage } from '../server-world.js';

export interface InstalledPackage {
  entry: string;
  version: string;
  /** The lockfile's `integrity` for the installed copy (sha512-…); "unlocked" when no lockfile names it. */
  integrity: string;
}

const installed = new Map<string, InstalledPackage>();

function installLine(pkg: ServerPackage): string {
  return `npm install --save-exact ${pkg.name}@${pkg.version}`;
}

/** The installed package, refusing any version but the pinned one. */
export function installedPackage(pkg: ServerPackage): InstalledPackage {
  const key = `${pkg.name}@${pkg.version}`;
  const known = installed.get(key);
  if (known) return known;
  const manifestPath = manifestOf(pkg.name);
  if (manifestPath === undefined) {
    throw new FactoryError('server_package', `the server world needs ${pkg.name}@${pkg.version}, which is not installed`, { fix: installLine(pkg) });
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { version?: string };
  if (manifest.version !== pkg.version) {
    throw new FactoryError('server_package', `${pkg.name} is installed at ${manifest.version}, but the world is pinned to ${pkg.version}`, { fix: installLine(pkg) });
  }
  const directory = dirname(manifestPath);
  const found: InstalledPackage = { entry: join(directory, pkg.entry), version: pkg.version, integrity: lockedIntegrity(directory, pkg.name) };
  installed.set(key, found);
  return found;
}

/**
 * The package's package.json, found the way Node looks for the package. Not
 * by resolving `<name>/package.json`: a package whose `exports` maps `./*`
 * elsewhere (git-mcp-server maps it to `./dist/*`) hides its manifest from
 * that.
 */
function manifestOf(name: string): string | undefined {
  const require = createRequire(import.meta.url);
  try {
    return require.resolve(`${name}/package.json`);
  } catch {
    for (const directory of require.resolve.paths(name) ?? []) {
      const manifest = join(directory, name, 'package.json');
      if (existsSync(manifest)) return manifest;
    }
    return undefined;
  }
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
