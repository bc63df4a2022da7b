// Owns the prototype server world for @modelcontextprotocol/server-filesystem:
// a fresh sandbox directory per episode filled by our own seeded generator,
// the real package spawned over stdio from node_modules in its own process
// group with an allowlisted environment, the declared normalisations between
// it and the client, and the state probe that reads the sandbox back into
// JSON (paths relative to the sandbox, contents and sha256). Prototype for
// issue 15 (docs/server-worlds.md); not registered as a world, not used by
// the factory yet.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { childEnvironment } from '../../core/child-environment.js';
import { FactoryError } from '../../core/errors.js';
import { sha256Hex } from '../../core/hashing.js';
import type { JsonObject } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import { ChildTransport, type ServerFault } from './child-transport.js';
import { jsDateString, NormalisingTransport, sandboxPath, type Normalisation } from './normalising-transport.js';

export const FILESYSTEM_SERVER_PACKAGE = { name: '@modelcontextprotocol/server-filesystem', version: '2026.8.31', entry: 'dist/index.js' } as const;

/** Where the sandbox shows to the model, in arguments and results. */
export const SHOWN_ROOT = '/sandbox';

export interface ServerPackage {
  name: string;
  version: string;
  entry: string;
}

/** The installed package's entry file, refusing any version but the pinned one. */
export function resolveServerEntry(pkg: ServerPackage, from: string = import.meta.url): string {
  let manifestPath: string;
  try {
    manifestPath = createRequire(from).resolve(`${pkg.name}/package.json`);
  } catch {
    throw new FactoryError('server_package', `${pkg.name} is not installed`, { fix: `npm install --save-exact ${pkg.name}@${pkg.version}` });
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { version?: string };
  if (manifest.version !== pkg.version) {
    throw new FactoryError('server_package', `${pkg.name} is ${manifest.version}, the world is pinned to ${pkg.version}`, {
      fix: `npm install --save-exact ${pkg.name}@${pkg.version}`,
    });
  }
  return join(dirname(manifestPath), pkg.entry);
}

export interface Sandbox {
  /** Our private temporary directory; shows to the model as `/`. */
  base: string;
  /** The directory the server may use; shows as SHOWN_ROOT. */
  root: string;
}

export async function createSandbox(prefix = 'episode-factory-fs-'): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  const root = join(base, SHOWN_ROOT.slice(1));
  await mkdir(root);
  return { base, root };
}

export async function removeSandbox(sandbox: Sandbox): Promise<void> {
  await rm(sandbox.base, { recursive: true, force: true });
}

const DIRECTORIES = ['docs', 'notes', 'src', 'reports', 'archive', 'config'];
const STEMS = ['readme', 'todo', 'plan', 'budget', 'summary', 'meeting', 'ideas', 'release', 'changelog', 'draft'];
const EXTENSIONS = ['.md', '.txt'];
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'review', 'deadline', 'owner', 'status', 'blocked', 'done', 'pending', 'budget', 'team', 'launch'];

/**
 * The seeded generator: 2 to 4 top-level directories, each with 1 to 3 text
 * files, all drawn from `random`. Files are written in sorted order; no
 * symlinks, no times set (times are normalised, never judged).
 */
export async function populateFilesystemSandbox(sandbox: Sandbox, random: Random): Promise<string[]> {
  const directories = random.sample(DIRECTORIES, random.int(2, 4)).sort();
  const files: string[] = [];
  for (const directory of directories) {
    const stems = random.sample(STEMS, random.int(1, 3)).sort();
    for (const stem of stems) {
      const lines = Array.from({ length: random.int(2, 5) }, () => Array.from({ length: random.int(3, 7) }, () => random.pick(WORDS)).join(' '));
      files.push(`${directory}/${stem}${random.pick(EXTENSIONS)}\u0000${lines.join('\n')}\n`);
    }
  }
  const written: string[] = [];
  for (const entry of files.sort()) {
    const [path, content] = entry.split('\u0000') as [string, string];
    await mkdir(join(sandbox.root, dirname(path)), { recursive: true });
    await writeFile(join(sandbox.root, path), content);
    written.push(path);
  }
  return written;
}

export interface FileEntry {
  bytes: number;
  sha256: string;
  /** The contents when they are valid UTF-8 of at most TEXT_LIMIT bytes. */
  text?: string;
}

export interface SandboxSnapshot {
  [key: string]: unknown;
  dirs: string[];
  files: Record<string, FileEntry>;
  /** Anything that is neither a file nor a directory (a symlink the agent could not make through this server, a socket). */
  other: string[];
}

const TEXT_LIMIT = 64 * 1024;

/** The state probe: the sandbox's tree, relative to its root, sorted, with contents and hashes. No times, modes or owners. */
export async function probeFilesystemSandbox(sandbox: Sandbox): Promise<SandboxSnapshot> {
  const snapshot: SandboxSnapshot = { dirs: [], files: {}, other: [] };
  async function walk(relative: string): Promise<void> {
    const names = (await readdir(join(sandbox.root, relative))).sort();
    for (const name of names) {
      const path = relative ? `${relative}/${name}` : name;
      const full = join(sandbox.root, path);
      const stat = await lstat(full);
      if (stat.isDirectory()) {
        snapshot.dirs.push(path);
        await walk(path);
      } else if (stat.isFile()) {
        const content = await readFile(full);
        const entry: FileEntry = { bytes: content.length, sha256: sha256Hex(content) };
        if (content.length <= TEXT_LIMIT) {
          try {
            entry.text = new TextDecoder('utf-8', { fatal: true }).decode(content);
          } catch {
            // Binary: the hash stands for it.
          }
        }
        snapshot.files[path] = entry;
      } else {
        snapshot.other.push(path);
      }
    }
  }
  await walk('');
  return snapshot;
}

/** The normalisations this world declares, in the order they apply to answers. */
export function filesystemNormalisations(sandbox: Sandbox, pinnedDate: string): Normalisation[] {
  return [sandboxPath(sandbox.root, SHOWN_ROOT, sandbox.base), jsDateString(pinnedDate)];
}

export interface FilesystemServerSession {
  sandbox: Sandbox;
  client: Client;
  normalisations: readonly Normalisation[];
  /** Faults the child caused (crash, garbage on stdout), in order. */
  serverFaults: ServerFault[];
  stderr: string;
  pid: number;
  call(name: string, args: JsonObject): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The lane's pinned date, shown for every date the server prints. */
  pinnedDate: string;
  /** The caller's environment; only allowlisted variables pass, then the secret filter. */
  environment?: NodeJS.ProcessEnv;
}

/** The child's environment: an allowlist, then the secret rules on top. */
export function serverEnvironment(sandbox: Sandbox, environment: NodeJS.ProcessEnv = process.env) {
  const chosen: NodeJS.ProcessEnv = {
    PATH: environment.PATH ?? '/usr/bin:/bin',
    TZ: 'UTC',
    LANG: 'C.UTF-8',
    HOME: sandbox.root,
  };
  return childEnvironment(chosen).env;
}

/** Spawns the real server on an already populated sandbox and connects a client through the normalisations. */
export async function startFilesystemServer(sandbox: Sandbox, options: StartOptions): Promise<FilesystemServerSession> {
  const entry = resolveServerEntry(FILESYSTEM_SERVER_PACKAGE);
  const serverFaults: ServerFault[] = [];
  let stderr = '';
  const child = new ChildTransport({
    command: process.execPath,
    args: [entry, sandbox.root],
    cwd: sandbox.root,
    env: serverEnvironment(sandbox, options.environment),
    onStderr: (text) => {
      if (stderr.length < 16 * 1024) stderr += text;
    },
    onServerFault: (fault) => serverFaults.push(fault),
  });
  const normalisations = filesystemNormalisations(sandbox, options.pinnedDate);
  const client = new Client({ name: 'episode-factory', version: '1' }, { capabilities: {} });
  await client.connect(new NormalisingTransport(child, normalisations));
  return {
    sandbox,
    client,
    normalisations,
    serverFaults,
    get stderr() {
      return stderr;
    },
    pid: child.pid!,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}
