// Owns `env serve`: a lane's tasks as an environment for online training
// (reset/step over HTTP, a reward from the hidden predicates), with its
// records kept in a dataset directory that `replay` and `audit` accept. The
// server itself is environment/environment-server.ts; this file reads the flags,
// says where it listens, and shuts it down cleanly on Ctrl-C or SIGTERM.

import type { Command } from 'commander';
import { FactoryError } from '../core/errors.js';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_EPISODES, startEnvironmentServer } from '../environment/environment-server.js';
import { loadLane } from '../lanes/lane-loader.js';
import { parseSeconds } from './model-timeout.js';
import type { Streams } from './output.js';
import { parseCount } from './count-flag.js';
import { parsePort } from './port-flag.js';

interface EnvServeFlags {
  port: string;
  host: string;
  idleTimeout: string;
  maxEpisodes: string;
  out?: string;
  trace?: string;
  json?: boolean;
}

export function registerEnv(program: Command, streams: Streams, setExit: (status: number) => void): void {
  const env = program
    .command('env')
    .summary("serve a lane's tasks as an environment for online training (reset/step over HTTP)")
    .description("A lane's tasks as an environment for online training (GRPO and the like): see `episode-factory env serve --help`.");
  env
    .command('serve')
    .summary("serve a lane's tasks as an HTTP environment: reset, step, reward, records")
    .description(
      "Serve a lane's tasks as an environment over HTTP (JSON bodies) for online training. POST /reset {task, seed, agent} " +
        'opens an episode on a fresh world of its own and answers with its episode_id, the opening messages (system, user) ' +
        'and the tool catalog, in OpenAI chat shape. POST /step {episode_id, message} takes one assistant message (content, ' +
        'tool_calls) and answers with the tool messages and any user reply, done, and when done the reward: 1 when every ' +
        'hidden predicate passed, else 0, with each predicate\'s verdict. Each episode is exactly the episode generate would ' +
        'run for that task and seed (same fault plan, limits, user simulator and trace; the lane\'s wall_time_ms bounds it ' +
        'from reset to done, the agent\'s thinking included). POST /episodes/{id}/record keeps a finished episode as a record, ' +
        'replay-verified on a fresh world first and, with --out, appended to a dataset directory that `replay` and `audit` ' +
        'accept. GET / lists the tasks; GET and DELETE /episodes/{id}. Errors are JSON {error: {code, message, field, fix}}. ' +
        'Listens on 127.0.0.1 (requests from browser pages are refused) and prints the URL on stderr; runs until Ctrl-C or ' +
        'SIGTERM, which close every episode and dispose its world. A Python client (standard library only) is in ' +
        "clients/python/. The same server speaks OpenEnv's protocol: the WebSocket /ws (frames reset, step, state, close, " +
        'mcp; actions list_tools, call_tool and message; a reset with only a seed derives the task from it), POST /mcp ' +
        '(JSON-RPC: tools/list, tools/call, openenv/session/create and close), /health, /metadata, /schema, /state and ' +
        '/openapi.json, so OpenEnv clients and `openenv validate --url` work against it (docs/environment.md).',
    )
    .argument('<lane>', 'a lane name (lanes/<name>.json) or a path to a lane file')
    .option('--port <port>', 'the port to listen on; 0 picks a free one', '0')
    .option('--host <host>', 'the address to listen on (anything but loopback exposes the worlds to your network)', '127.0.0.1')
    .option('--idle-timeout <seconds>', 'close an episode (and dispose its world) after this long without a request', String(DEFAULT_IDLE_TIMEOUT_MS / 1000))
    .option('--max-episodes <n>', 'episodes running at once; more get 503 until one finishes or is closed', String(DEFAULT_MAX_EPISODES))
    .option('--out <dir>', 'a dataset directory kept records are appended to (new, empty, or one an earlier env serve wrote)')
    .option('--trace <dir>', 'write each episode\'s trace to <dir>/<record id>.<episode id>.jsonl')
    .option('--json', 'also print one JSON line {url, lane, ...} on stdout once listening')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  episode-factory env serve tool-world-v1 --port 8940\n' +
        '  episode-factory env serve issues-dialogue-v1 --out datasets/online --trace traces/online\n' +
        '  curl -s localhost:8940/tasks\n' +
        '  curl -s localhost:8940/reset -d \'{"task": "close-duplicate", "seed": 3, "agent": "my-model"}\'\n' +
        '  python3 clients/python/example_agent.py --url http://127.0.0.1:8940 --episodes 5\n' +
        '  python3 clients/python/openenv_validate.py http://127.0.0.1:8940     # the checks of openenv validate --url\n' +
        '  episode-factory replay datasets/online && episode-factory audit datasets/online',
    )
    .action(async (laneReference: string, flags: EnvServeFlags) => {
      const port = parsePort('--port', flags.port, 8940);
      const idleTimeoutMs = parseSeconds('--idle-timeout', flags.idleTimeout, 300);
      const maxEpisodes = parseCount('--max-episodes', flags.maxEpisodes);
      const lane = loadLane(laneReference);
      const server = await startEnvironmentServer({
        lane,
        host: flags.host,
        port,
        idleTimeoutMs,
        maxEpisodes,
        ...(flags.out !== undefined ? { outDir: flags.out } : {}),
        ...(flags.trace !== undefined ? { traceDir: flags.trace } : {}),
        onLog: (message) => streams.stderr.write(`env: ${message}\n`),
      }).catch((error: NodeJS.ErrnoException) => {
        if (error instanceof FactoryError || typeof error.code !== 'string' || !error.code.startsWith('E')) throw error;
        throw new FactoryError('usage', `cannot listen on ${flags.host}:${port}: ${error.code}`, {
          fix: error.code === 'EADDRINUSE' ? 'pick another port, or --port 0 for a free one' : 'check --host and --port',
        });
      });
      let stop!: (signal: string) => void;
      const stopped = new Promise<string>((resolve) => (stop = resolve));
      const onSignal = (signal: NodeJS.Signals) => stop(signal);
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        streams.stderr.write(`env: serving ${lane.name} at ${server.url}\n`);
        if (flags.json) {
          streams.stdout.write(JSON.stringify({ url: server.url, lane: lane.name, lane_sha256: lane.sha256, host: server.host, port: server.port, out: flags.out ?? null }) + '\n');
        }
        const signal = await stopped;
        streams.stderr.write(`env: ${signal}: closing ${server.episodes()} episode${server.episodes() === 1 ? '' : 's'}\n`);
        await server.close();
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      streams.stderr.write('env: stopped\n');
      setExit(0);
    });
}

