// Owns finding a package a new server world is written for: the pinned
// version in node_modules (the working directory's first, then the factory's
// own), and the file that starts it, read from its package.json `bin` or
// `main`. Nothing is installed here; a missing package or another version is
// exit 2 with the exact install line as the fix.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { FactoryError } from '../../../core/errors.js';
import { installLine, packageManifests } from '../server-package.js';

export interface FoundPackage {
  name: string;
  version: string;
  description: string;
  /** The package's directory on disk. */
  directory: string;
  /** The start file, relative to the package (what `launch.package.entry` names). */
  entry: string;
  /** How the entry was chosen, in words, when there was a choice to make. */
  entryNote?: string;
}

interface Manifest {
  name?: string;
  version?: string;
  description?: string;
  bin?: string | Record<string, string>;
  main?: string;
}

/** `name@version` split; a scoped name keeps its leading `@`. */
export function parsePackageSpec(spec: string): { name: string; version: string } {
  const at = spec.lastIndexOf('@');
  const name = at > 0 ? spec.slice(0, at) : '';
  const version = at > 0 ? spec.slice(at + 1) : '';
  if (!name || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    throw new FactoryError('usage', `--package ${JSON.stringify(spec)} is not <name>@<exact version>`, { fix: 'name the package and its exact version, e.g. --package @modelcontextprotocol/server-memory@2026.8.31' });
  }
  return { name, version };
}

/** The installed package at exactly `version`, and its start file. */
export function findPackage(name: string, version: string, cwd = process.cwd()): FoundPackage {
  const manifests = packageManifests(name, resolve(cwd));
  if (manifests.length === 0) {
    throw new FactoryError('server_package', `${name} is not installed in node_modules of ${cwd} or of the factory`, { fix: installLine(name, version) });
  }
  const read = manifests.map((path) => ({ path, manifest: JSON.parse(readFileSync(path, 'utf8')) as Manifest }));
  const pinned = read.find((entry) => entry.manifest.version === version);
  if (!pinned) {
    const versions = read.map((entry) => `${entry.manifest.version} (${dirname(entry.path)})`).join(', ');
    throw new FactoryError('server_package', `${name} is installed at ${versions}, not at ${version}`, { fix: installLine(name, version) });
  }
  const directory = dirname(pinned.path);
  const { entry, note } = entryOf(name, pinned.manifest);
  if (!existsSync(join(directory, entry))) {
    throw new FactoryError('server_package', `${name}@${version} names ${entry} as its start file, but ${join(directory, entry)} does not exist`, { fix: `reinstall it: ${installLine(name, version)}` });
  }
  return {
    name,
    version,
    description: pinned.manifest.description ?? '',
    directory,
    entry: relative(directory, join(directory, entry)),
    ...(note ? { entryNote: note } : {}),
  };
}

/** One bin → that; several → the one named like the package, else the first (said); no bin → main. */
function entryOf(name: string, manifest: Manifest): { entry: string; note?: string } {
  const bin = manifest.bin;
  if (typeof bin === 'string') return { entry: bin };
  const entries = Object.entries(bin ?? {});
  if (entries.length === 1) return { entry: entries[0]![1] };
  if (entries.length > 1) {
    const last = name.split('/').pop()!;
    const named = entries.find(([command]) => command === last) ?? entries.find(([command]) => command === name);
    const chosen = named ?? entries[0]!;
    const others = entries.filter((entry) => entry !== chosen).map(([command]) => command).join(', ');
    return { entry: chosen[1], note: `the package has ${entries.length} bin entries; chose "${chosen[0]}" (${named ? 'named like the package' : 'the first'}) over ${others}` };
  }
  if (manifest.main) return { entry: manifest.main, note: 'the package has no bin; used its main' };
  throw new FactoryError('server_package', `${name}@${manifest.version} has neither a bin nor a main in its package.json, so there is nothing to start`, {
    fix: 'write the definition by hand with launch.package.entry naming the server\'s start file (docs/server-worlds.md)',
  });
}
