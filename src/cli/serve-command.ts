// Owns `serve`: one world as a standalone MCP server (stdio, or Streamable
// HTTP on loopback) built from a seed exactly as the factory builds an
// episode's world, so an IDE, the MCP Inspector or another harness can use it,
// and `--dump-state` shows what they did to it.

import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { canonicalJson } from '../core/canonical-json.js';
import { FactoryError } from '../core/errors.js';
import { isJsonObject, type JsonObject } from '../core/json-value.js';
import { substream } from '../core/random.js';
import { compileValidator, formatFieldErrors } from '../core/schema-validator.js';
import { MAX_JSON_DEPTH } from '../core/bounded-json.js';
import { MAX_STDIO_MESSAGE_BYTES } from '../world/bounded-stdio-transport.js';
import { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS, hostWorldOverHttp, MAX_HTTP_BODY_BYTES } from '../world/http-world-host.js';
import { hostWorldOverStdio } from '../world/stdio-world-host.js';
import type { ServerSource } from '../world/mcp-server-binding.js';
import { isServerWorld } from '../world/server-world.js';
import { createForwardingServer } from '../world/servers/forwarding-server.js';
import { getWorld, worldNames } from '../world/world-registry.js';
import { openWorldSession, type WorldSession } from '../world/world-session.js';
import type { Streams } from './output.js';
import { parsePort } from './port-flag.js';

/** What a served server world shows for every date its server prints (an episode shows its lane's produced_at). */
const SERVE_PINNED_DATE = '2026-01-01T00:00:00Z';

interface ServeFlags {
  seed: string;
  config?: string;
  stdio?: boolean;
  http?: string;
  dumpState?: string | boolean;
  allowOrigin?: string[];
  maxSessions?: string;
}

export function registerServe(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('serve')
    .summary('serve a tool world as a standalone MCP server (stdio or HTTP)')
    .description(
      'Serve one world as a standalone MCP server, built from --seed exactly as a lane\'s episode with that seed builds ' +
        'it, so any MCP client (an IDE, the MCP Inspector, a model harness) can use it. Stdio by default (stdout ' +
        'carries only MCP messages; notes go to stderr); --http PORT serves Streamable HTTP at ' +
        'http://127.0.0.1:PORT/mcp on loopback only (0 picks a free port; the URL is printed on stderr), with ' +
        'DNS-rebinding protection (the Host header must be 127.0.0.1:PORT or localhost:PORT). Over HTTP a request ' +
        'that carries an Origin header (a web page in a browser) is refused with 403 unless --allow-origin names that ' +
        'origin; clients that send no Origin (the MCP SDK\'s clients, curl) are served. At most --max-sessions HTTP ' +
        `sessions are open at once (default ${DEFAULT_MAX_SESSIONS}); one more initialize is answered 503 until a ` +
        `client ends its session (DELETE) or one goes ${DEFAULT_SESSION_IDLE_MS / 60_000} minutes without a request. ` +
        `Every message is read behind limits: at most ${mebibytes(MAX_STDIO_MESSAGE_BYTES)} on one stdio line, ` +
        `${mebibytes(MAX_HTTP_BODY_BYTES)} in one HTTP body, nested at most ${MAX_JSON_DEPTH} levels; a message past ` +
        'a limit, or one that is not JSON (-32700) or not JSON-RPC (-32600), is answered with a JSON-RPC error that ' +
        'names what is wrong and carries its id where it can be read (over HTTP with 413 or 400), and the session ' +
        'goes on. Runs until the client closes stdin (stdio) or Ctrl-C / SIGTERM.',
    )
    .argument('<world>', `a world name: ${worldNames().join(', ')} (a server world runs its real package on a fresh sandbox drawn from --seed)`)
    .option('--seed <n>', 'the seed the world is built from', '0')
    .option('--config <json>', 'the world config a lane would give in world.config, as JSON')
    .option('--stdio', 'serve on stdin/stdout (the default)')
    .option('--http <port>', 'serve Streamable HTTP on 127.0.0.1:PORT')
    .option('--allow-origin <origin>', 'with --http: let web pages from ORIGIN (scheme://host[:port]) call the server, with CORS headers (repeatable)', collect)
    .option('--max-sessions <n>', `with --http: sessions open at once; one more initialize gets 503 (default: ${DEFAULT_MAX_SESSIONS})`)
    .option('--dump-state [file]', 'on exit, write the world\'s final snapshot as JSON to FILE (default: stderr for stdio, stdout for HTTP)')
    .addHelpText(
      'after',
      '\nExamples:\n  episode-factory serve shop --seed 3                     # for a client that spawns stdio servers\n' +
        '  episode-factory serve calendar --http 8931 --dump-state  # then connect to http://127.0.0.1:8931/mcp\n' +
        '  npx @modelcontextprotocol/inspector npx episode-factory serve issues',
    )
    .action(async (name: string, flags: ServeFlags) => {
      if (flags.stdio && flags.http !== undefined) throw new FactoryError('usage', '--stdio and --http are two transports; pick one', { fix: 'drop one of them' });
      if (!/^[0-9]{1,9}$/.test(flags.seed)) throw new FactoryError('usage', `--seed "${flags.seed}" is not a whole number`, { fix: 'pass --seed 0, --seed 17, ...' });
      const port = flags.http === undefined ? undefined : parsePort('--http', flags.http, 8931);
      if (flags.allowOrigin !== undefined && port === undefined) {
        throw new FactoryError('usage', '--allow-origin applies to --http only (stdio has no origins)', { fix: 'add --http PORT, or drop --allow-origin' });
      }
      const allowedOrigins = (flags.allowOrigin ?? []).map(parseOrigin);
      if (flags.maxSessions !== undefined && port === undefined) {
        throw new FactoryError('usage', '--max-sessions applies to --http only (stdio serves one client)', { fix: 'add --http PORT, or drop --max-sessions' });
      }
      const maxSessions = flags.maxSessions === undefined ? DEFAULT_MAX_SESSIONS : parseSessionCount(flags.maxSessions);
      const world = getWorld(name);
      const config = parseConfig(flags.config, world.configSchema, name);
      const seed = Number(flags.seed);
      // A server world is its real package on a sandbox drawn from the seed, forwarded to the client.
      let session: WorldSession | undefined;
      let source: ServerSource;
      let finalSnapshot: () => Promise<unknown>;
      if (isServerWorld(world)) {
        session = await openWorldSession(world, substream(seed, 'world'), config, { pinnedDate: SERVE_PINNED_DATE });
        const connection = await session.connect({});
        const live = session;
        source = () => createForwardingServer(connection.client, world);
        finalSnapshot = async () => {
          await connection.close();
          return live.finalSnapshot();
        };
      } else {
        const instance = { world, state: world.init(substream(seed, 'world'), config) };
        source = instance;
        finalSnapshot = async () => world.snapshot(instance.state);
      }
      const about = `world ${world.name} ${world.version}${isServerWorld(world) ? ` (${world.package.name}@${world.package.version})` : ''}, seed ${seed}, ${world.tools.length} tools`;

      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        if (port === undefined) {
          const host = await hostWorldOverStdio(source, process.stdin, process.stdout, {
            onProblem: (message) => streams.stderr.write(`episode-factory serve: ${message}\n`),
          });
          streams.stderr.write(`episode-factory serve: ${about}, on stdio\n`);
          await Promise.race([host.closed, stopped]);
          await host.close();
        } else {
          const host = await hostWorldOverHttp(source, {
            port,
            allowedOrigins,
            maxSessions,
            onProblem: (message) => streams.stderr.write(`episode-factory serve: ${message}\n`),
          }).catch((error: NodeJS.ErrnoException) => {
            throw new FactoryError('usage', `cannot listen on 127.0.0.1:${port}: ${error.code ?? error.message}`, {
              fix: error.code === 'EADDRINUSE' ? 'pick another port, or --http 0 for a free one' : 'pick a port between 1024 and 65535',
            });
          });
          if (allowedOrigins.length > 0) streams.stderr.write(`episode-factory serve: web pages from ${allowedOrigins.join(', ')} may call it\n`);
          streams.stderr.write(`episode-factory serve: ${about}, at ${host.url} (Ctrl-C to stop)\n`);
          await stopped;
          await host.close();
        }
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
      const state = await finalSnapshot().finally(() => session?.dispose());
      if (flags.dumpState !== undefined && flags.dumpState !== false) {
        const text = JSON.stringify(JSON.parse(canonicalJson(state)), null, 2) + '\n';
        if (typeof flags.dumpState === 'string') writeFileSync(flags.dumpState, text);
        else (port === undefined ? streams.stderr : streams.stdout).write(text);
      }
      streams.stderr.write(`episode-factory serve: stopped\n`);
      setExit(0);
    });
}

function parseSessionCount(text: string): number {
  if (!/^[0-9]{1,6}$/.test(text) || Number(text) < 1) {
    throw new FactoryError('usage', `--max-sessions "${text}" is not a whole number of sessions`, { fix: `pass 1 or more, e.g. --max-sessions ${DEFAULT_MAX_SESSIONS}` });
  }
  return Number(text);
}

function mebibytes(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB`;
}

/** An --allow-origin value as browsers send it in the Origin header: `scheme://host[:port]` (lower case, default port dropped), or `null`. */
function parseOrigin(text: string): string {
  if (text === 'null') return text;
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#@\s]+)\/?$/i.exec(text);
  let origin: string | undefined;
  try {
    origin = match ? new URL(text).origin : undefined;
  } catch {
    origin = undefined;
  }
  if (!match || origin === undefined) {
    throw new FactoryError('usage', `--allow-origin "${text}" is not an origin`, { fix: 'pass scheme://host[:port] with no path, e.g. --allow-origin http://localhost:5173' });
  }
  // Node gives non-web schemes (chrome-extension://...) an opaque origin; browsers send them as written.
  return origin !== 'null' ? origin : `${match[1]!.toLowerCase()}://${match[2]}`;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function parseConfig(text: string | undefined, schema: JsonObject, world: string): JsonObject {
  if (text === undefined) return {};
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw new FactoryError('usage', `--config is not JSON: ${(error as Error).message}`, { fix: `pass an object, e.g. --config '{}'` });
  }
  const errors = compileValidator(schema)(config);
  if (errors.length > 0 || !isJsonObject(config)) {
    throw new FactoryError('usage', `--config does not fit the ${world} world: ${errors.length > 0 ? formatFieldErrors(errors) : 'expected an object'}`, {
      fix: `see \`episode-factory worlds show ${world}\` for its config`,
    });
  }
  return config;
}
