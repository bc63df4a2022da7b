// Owns one episode of a server world: a fresh sandbox filled by the world's
// seeded generator, the real package over stdio in its own process group with
// an allowlisted, secret-free environment, the declared normalisations and
// argument guards under the fault layer, the state probe before and after, and
// the world actor naming the package, its lockfile integrity, what the server
// said it was, every normalisation and every guard. Each connection is the
// thread's kept child re-pointed at this sandbox (server-pool.ts) where the
// world can be, else a child of its own, killed (its whole group) on close.
// Either way state lives on disk in the sandbox, so it survives a reconnect
// the way a scripted world's state does.

import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { childEnvironment } from '../../core/child-environment.js';
import { FactoryError, errorMessage } from '../../core/errors.js';
import type { JsonObject, JsonValue } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import { FaultLayer } from '../faults/fault-layer.js';
import { createClient, type ConnectOptions, type Connection } from '../in-process-connection.js';
import type { PopulateContext, ServerProgram, ServerWorld } from '../server-world.js';
import { mcpSdkVersion } from '../world-actor.js';
import type { WorldSession, WorldSessionOptions } from '../world-session-contract.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerFault } from '../server-fault.js';
import { ChildTransport, type ChildTransportOptions } from './child-transport.js';
import { leaseKeptChild, poolingEnabled, type PooledLease } from './server-pool.js';
import { GuardingTransport, type ArgumentGuard } from './guarding-transport.js';
import { normaliseUp, NormalisingTransport, type Normalisation } from './normalising-transport.js';
import { createSandbox, removeSandbox, type Sandbox, sandboxHome } from './sandbox.js';
import { installedPackage } from './server-package.js';

/** A server answers initialize in ~0.2 s here; one that has not after this long is not coming. */
const STARTUP_TIMEOUT_MS = 15_000;
/** After a tool call timed out, how long the child has to answer a ping before it counts as hung. */
const LIVENESS_TIMEOUT_MS = 1_000;
const STDERR_LIMIT = 16 * 1024;

/** The child's environment: an allowlist, the adapter's own variables, then the secret rules on top. */
export function serverEnvironment(sandbox: Sandbox, added: Record<string, string> = {}, environment: NodeJS.ProcessEnv = process.env) {
  return childEnvironment({
    PATH: environment.PATH ?? '/usr/bin:/bin',
    TZ: 'UTC',
    LANG: 'C.UTF-8',
    HOME: sandboxHome(sandbox),
    ...added,
  }).env;
}

/** A child of its own on this sandbox (not a kept one): the world's program and launch line, the filtered environment, cwd the root. */
export function childOnSandbox(world: ServerWorld, sandbox: Sandbox, context: PopulateContext, hooks: Pick<ChildTransportOptions, 'onStderr' | 'onServerFault'> = {}): ChildTransport {
  const program = programOf(world);
  const launch = world.launch(sandbox, context);
  return new ChildTransport({ command: program.command, args: [...program.args, ...launch.args], cwd: sandbox.root, env: serverEnvironment(sandbox, launch.env), ...hooks });
}

/** How a server world names itself in a record. */
export function serverWorldActor(
  world: ServerWorld,
  integrity: string,
  serverInfo: { name: string; version: string } | undefined,
  normalisations: readonly Normalisation[],
  guards: readonly ArgumentGuard[] = world.guards ?? [],
): JsonObject {
  return {
    role: 'world',
    kind: 'mcp-server',
    name: world.name,
    version: world.version,
    transport: 'stdio',
    mcp_sdk: `@modelcontextprotocol/sdk@${mcpSdkVersion()}`,
    package: `${world.package.name}@${world.package.version}`,
    integrity,
    server_info: serverInfo ? `${serverInfo.name} ${serverInfo.version}` : 'unknown',
    normalisations: normalisations.map((rule) => ({ id: rule.id, rule: rule.describe })),
    // Only a world that declares guards lists them, so other worlds' records keep their bytes.
    ...(guards.length > 0 ? { guards: guards.map((guard) => ({ id: guard.id, rule: guard.describe })) } : {}),
  };
}

/** A fresh sandbox whose root is named as the model sees it (`/sandbox` → `<tmp>/…/sandbox`). */
function sandboxFor(world: ServerWorld): Promise<Sandbox> {
  return createSandbox(world.name, world.shownRoot.split('/').filter(Boolean).pop() ?? 'sandbox', world.sandboxParent?.());
}

/** How this world's child starts: a test fixture's entry, the world's own program, or `node <entry>` of the pinned package. */
export function programOf(world: ServerWorld): ServerProgram {
  world.preflight?.();
  if (world.resolveEntry) return { command: process.execPath, args: [world.resolveEntry()], integrity: 'fixture' };
  if (world.program) return world.program();
  const found = installedPackage(world.package);
  return { command: process.execPath, args: [found.entry], integrity: found.integrity };
}

export async function openServerSession(world: ServerWorld, random: Random, config: JsonObject, options: WorldSessionOptions): Promise<WorldSession> {
  const program = programOf(world);
  const { integrity } = program;
  const context = { pinnedDate: options.pinnedDate };
  const sandbox = await sandboxFor(world);
  let disposed = false;
  const live = new Set<Connection>();
  const dispose = async () => {
    if (disposed) return;
    disposed = true;
    await Promise.all([...live].map((connection) => connection.close().catch(() => undefined)));
    await removeSandbox(sandbox);
  };
  try {
    await world.populate(sandbox, random, config, context);
    const normalisations = world.normalisations(sandbox, options.pinnedDate);
    const snapshot = async () => normaliseUp(await world.probe(sandbox), normalisations) as JsonValue;
    const initialSnapshot = await snapshot();
    // Only a child per connection starts on this sandbox's own launch line; a kept child has its own.
    const launch = world.launch(sandbox, context);
    let serverInfo: { name: string; version: string } | undefined;
    let spawned = 0;

    const connect = async (connectOptions: ConnectOptions): Promise<Connection> => {
      if (disposed) throw new Error(`the ${world.name} world was disposed`);
      let stderr = '';
      const started = performance.now();
      const onServerFault = (fault: ServerFault) => connectOptions.onServerFault?.(fault);
      // A kept child (a lease returns it to the pool) where the world can be re-pointed; else a child of this connection.
      let downstream: Transport;
      let child: ChildTransport;
      let pooled: PooledLease | undefined;
      if (poolingEnabled(world)) {
        pooled = await leaseKeptChild(world, program, context, sandbox, (directory, added) => serverEnvironment({ base: directory, root: directory }, added), onServerFault);
        downstream = pooled.transport;
        child = pooled.transport.child;
      } else {
        child = childOnSandbox(world, sandbox, context, {
          onStderr: (text) => {
            if (stderr.length < STDERR_LIMIT) stderr += text;
          },
          onServerFault,
        });
        downstream = child;
      }
      const client = createClient();
      let layer: FaultLayer | undefined;
      const connection: Connection = {
        client,
        close: async () => {
          live.delete(connection);
          await client.close().catch(() => undefined);
          await layer?.close().catch(() => undefined);
          await downstream.close().catch(() => undefined);
          if (stderr) options.onEvent?.('server_stderr', { world: world.name, text: stderr });
        },
        unresponsive: async () => {
          if (await child.responsive(LIVENESS_TIMEOUT_MS)) return false;
          child.report({ kind: 'hung', detail: `the server did not answer a ping within ${LIVENESS_TIMEOUT_MS} ms after a tool call timed out; it was killed and restarted on the same sandbox` });
          await child.close();
          return true;
        },
      };
      live.add(connection);
      // Guards above the normaliser: they judge the arguments as the model sent them, and their refusals are our own text.
      // A kept child may see the root under a path of its own (a link), which its connection's rules show as the root too.
      const connectionRules = pooled && world.reuse?.normalisations ? world.reuse.normalisations(pooled.directory, sandbox, options.pinnedDate) : normalisations;
      const normalised = new NormalisingTransport(downstream, connectionRules);
      const upstream = world.guards?.length ? new GuardingTransport(normalised, world.guards) : normalised;
      try {
        if (!connectOptions.faults) {
          await client.connect(upstream, { timeout: STARTUP_TIMEOUT_MS });
        } else {
          const [clientTransport, layerDown] = InMemoryTransport.createLinkedPair();
          layer = new FaultLayer(connectOptions.faults, layerDown, upstream, { onError: connectOptions.onLayerError });
          await layer.start();
          await client.connect(clientTransport, { timeout: STARTUP_TIMEOUT_MS });
        }
      } catch (error) {
        await connection.close();
        const said = stderr || pooled?.stderr() || '';
        throw new FactoryError('server_failed', `${world.package.name}@${world.package.version} did not start: ${errorMessage(error)}${said ? ` (stderr: ${said.trim().slice(-500)})` : ''}`, {
          fix: `run \`${[program.command, ...program.args, ...launch.args].join(' ')}\` by hand to see why, or reinstall it: npm install --save-exact ${world.package.name}@${world.package.version}`,
          cause: error,
        });
      }
      serverInfo ??= client.getServerVersion();
      spawned++;
      options.onEvent?.('server_started', { world: world.name, pid: child.pid ?? null, spawn: spawned, kept: pooled !== undefined, ms: Math.round(performance.now() - started) });
      return connection;
    };

    return {
      name: world.name,
      version: world.version,
      tools: world.tools,
      initialSnapshot,
      connect,
      finalSnapshot: snapshot,
      actor: () => serverWorldActor(world, integrity, serverInfo, normalisations),
      serverFaults: (faults) => faults.map((fault) => ({ kind: fault.kind, step: fault.step, detail: fault.detail })),
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** A seed's initial snapshot alone: the sandbox is filled, probed and removed, and no child is started. */
export async function drawServerSnapshot(world: ServerWorld, random: Random, config: JsonObject, pinnedDate: string): Promise<JsonValue> {
  world.preflight?.();
  const sandbox = await sandboxFor(world);
  try {
    await world.populate(sandbox, random, config, { pinnedDate });
    return normaliseUp(await world.probe(sandbox), world.normalisations(sandbox, pinnedDate)) as JsonValue;
  } finally {
    await removeSandbox(sandbox);
  }
}
