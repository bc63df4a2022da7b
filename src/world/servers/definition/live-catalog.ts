// Owns meeting a server for the first time: its start file run with this Node
// in a fresh sandbox (an empty root), through the same child transport and
// secret-free environment an episode uses; first with no arguments, then,
// if it exits, does not answer `initialize` or prints a usage line, with the
// root as its only argument (servers such as server-filesystem need the
// directory they may touch). What comes back is the launch line that worked
// and the exact tools/list answer, every page of it. Each child's group is
// killed and its sandbox removed either way.

import { join } from 'node:path';
import { errorMessage, FactoryError } from '../../../core/errors.js';
import { createClient } from '../../in-process-connection.js';
import { ChildTransport } from '../child-transport.js';
import type { ListedTool } from '../listed-catalog.js';
import { createSandbox, removeSandbox, type Sandbox } from '../sandbox.js';
import { serverEnvironment } from '../server-session.js';
import type { FoundPackage } from './package-entry.js';

/** The same deadline an episode gives a server to answer initialize. */
export const INITIALIZE_TIMEOUT_MS = 15_000;
const STDERR_LIMIT = 4 * 1024;

export interface LiveCatalog {
  /** The launch arguments that worked, with placeholders: [] or ["{root}"]. */
  args: string[];
  /** Each attempt, in order, and how it ended. */
  attempts: { args: string[]; outcome: string }[];
  serverInfo?: { name: string; version: string };
  tools: ListedTool[];
}

interface Attempt {
  args: string[];
  real: (sandbox: Sandbox) => string[];
}

const ATTEMPTS: Attempt[] = [
  { args: [], real: () => [] },
  { args: ['{root}'], real: (sandbox) => [sandbox.root] },
];

/** A usage line on stderr: a server that answers with no arguments but says it wants some (server-filesystem prints one and then has no directory to serve). */
const USAGE = /^\s*usage:/im;

interface Listed {
  tools: ListedTool[];
  serverInfo?: { name: string; version: string };
  stderr: string;
}

/**
 * Starts the package's entry (no arguments, then the root) and lists its
 * tools. The root is tried when the first attempt exits, does not answer
 * initialize in time, or answers but prints a usage line; a server that
 * answers only with no arguments keeps that answer.
 */
export async function listLiveCatalog(found: FoundPackage, worldName: string, timeoutMs = INITIALIZE_TIMEOUT_MS): Promise<LiveCatalog> {
  const attempts: LiveCatalog['attempts'] = [];
  let fallback: LiveCatalog | undefined;
  for (const attempt of ATTEMPTS) {
    let listed: Listed;
    try {
      listed = await listOnce(found, worldName, attempt, timeoutMs);
    } catch (error) {
      if (error instanceof FactoryError) throw error;
      attempts.push({ args: attempt.args, outcome: errorMessage(error) });
      continue;
    }
    const result: LiveCatalog = { args: attempt.args, attempts, ...(listed.serverInfo ? { serverInfo: listed.serverInfo } : {}), tools: listed.tools };
    if (attempt.args.length === 0 && USAGE.test(listed.stderr)) {
      const line = listed.stderr.split('\n').find((text) => USAGE.test(text))!.trim();
      attempts.push({ args: attempt.args, outcome: `answered, but printed a usage line on stderr, so it wants arguments: ${line}` });
      fallback = result;
      continue;
    }
    attempts.push({ args: attempt.args, outcome: 'answered initialize and tools/list' });
    return result;
  }
  if (fallback) return fallback;
  throw new FactoryError('server_failed', `${found.name}@${found.version} did not answer initialize with no arguments nor with the sandbox root as its argument: ${attempts.map((attempt) => `[${attempt.args.join(' ')}] ${attempt.outcome}`).join('; ')}`, {
    fix: `run \`node ${join(found.directory, found.entry)}\` by hand to learn what it needs, then write launch.args and launch.env in the definition yourself (docs/server-worlds.md)`,
  });
}

/** One start in a fresh sandbox: initialize, every page of tools/list, then the child's group killed and the sandbox removed. */
async function listOnce(found: FoundPackage, worldName: string, attempt: Attempt, timeoutMs: number): Promise<Listed> {
  const sandbox = await createSandbox(worldName, 'sandbox');
  let stderr = '';
  const transport = new ChildTransport({
    command: process.execPath,
    args: [join(found.directory, found.entry), ...attempt.real(sandbox)],
    cwd: sandbox.root,
    env: serverEnvironment(sandbox),
    onStderr: (text) => {
      if (stderr.length < STDERR_LIMIT) stderr += text;
    },
  });
  const client = createClient();
  try {
    try {
      await client.connect(transport, { timeout: timeoutMs });
    } catch (error) {
      const said = stderr.trim().slice(-300);
      throw new Error(`did not answer initialize: ${errorMessage(error)}${said ? ` (stderr: ${said})` : ''}`);
    }
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        tools.push(...(page.tools as ListedTool[]));
        cursor = page.nextCursor;
      } while (cursor);
    } catch (error) {
      throw new FactoryError('server_failed', `${found.name}@${found.version} answered initialize but tools/list failed: ${errorMessage(error)}`, {
        fix: `run \`node ${join(found.directory, found.entry)}\` by hand to see why; a server without tools cannot be a world`,
      });
    }
    const serverInfo = client.getServerVersion();
    return { tools, stderr, ...(serverInfo ? { serverInfo: { name: serverInfo.name, version: serverInfo.version } } : {}) };
  } finally {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
    await removeSandbox(sandbox);
  }
}
