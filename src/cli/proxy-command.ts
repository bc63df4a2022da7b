// Owns the `proxy` command: put the fault layer between any MCP client and any
// stdio MCP server. stdout carries protocol messages only.

import type { Command } from 'commander';
import { childEnvironment, describeSecretRules, isVariableName } from '../core/child-environment.js';
import { MAX_JSON_DEPTH } from '../core/bounded-json.js';
import { FactoryError } from '../core/errors.js';
import { loadFaultPlan } from '../lanes/fault-plan-loader.js';
import { JsonlAppender } from '../records/jsonl.js';
import { MAX_STDIO_MESSAGE_BYTES } from '../world/bounded-stdio-transport.js';
import { ProxyStartError, runProxy } from '../world/faults/stdio-proxy.js';
import type { Streams } from './output.js';

interface ProxyFlags {
  faults: string;
  seed: string;
  log?: string;
  passEnv?: string[];
}

export function registerProxy(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('proxy')
    .summary('serve any stdio MCP server with a fault plan applied, for chaos-testing MCP clients')
    .description(
      'Starts <command ...> as a stdio MCP server and serves it on this process\'s stdin/stdout, injecting the faults of ' +
        'the plan (empty or paginated tool lists, JSON-RPC and isError failures, transient failures, timeouts, latency, ' +
        'results that break their output schema, truncated results, renamed tools, disconnects, stale reads). Which ' +
        'faults fire is drawn from --seed, so the same client run sees the same faults. Every fired fault is summarised ' +
        'on stderr, and appended to --log FILE as JSONL when it is given (nothing is written otherwise); stdout carries ' +
        'protocol messages only.\n\nWhat the client sends is read behind limits before it reaches the server: one ' +
        `message (one line) at most ${MAX_STDIO_MESSAGE_BYTES / (1024 * 1024)} MiB, nested at most ${MAX_JSON_DEPTH} levels. A message past a limit, ` +
        'or one that is not JSON (-32700) or not JSON-RPC (-32600), is answered by the proxy with a JSON-RPC error naming ' +
        'what is wrong, with its id where it can be read, and noted on stderr; the session goes on until the client closes ' +
        'stdin.\n\nThe server inherits this environment minus every variable that looks like a secret ' +
        '(names matched case-insensitively): ' +
        describeSecretRules() +
        '. The names held back are listed on stderr; let one through with --pass-env NAME (repeatable).',
    )
    .requiredOption('--faults <plan.json>', 'the fault plan (schemas/fault-plan.v1.schema.json), e.g. lanes/plans/chaos.json')
    .option('--seed <n>', 'seed for which faults fire', '0')
    .option('--log <file>', 'append each fired fault to FILE as JSONL (default: no log file, stderr only)')
    .option('--pass-env <name>', 'pass this environment variable to the server even though it looks like a secret (repeatable)', collect)
    .argument('<command...>', 'the server command and its arguments, after --')
    .addHelpText(
      'after',
      '\nExamples:\n  episode-factory proxy --faults lanes/plans/chaos.json --seed 3 -- npx -y @modelcontextprotocol/server-memory\n' +
        '  episode-factory proxy --faults lanes/plans/chaos.json --log faults.jsonl --pass-env GITHUB_TOKEN -- npx -y @modelcontextprotocol/server-github',
    )
    .action(async (command: string[], flags: ProxyFlags) => {
      if (!/^[0-9]{1,9}$/.test(flags.seed)) {
        throw new FactoryError('usage', `--seed "${flags.seed}" is not a whole number`, { fix: 'pass --seed 0, --seed 17, ...' });
      }
      const plan = loadFaultPlan(flags.faults);
      const passEnv = flags.passEnv ?? [];
      const badName = passEnv.find((name) => !isVariableName(name));
      if (badName !== undefined) {
        throw new FactoryError('usage', `--pass-env "${badName}" is not an environment variable name`, { fix: 'pass one name per --pass-env, e.g. --pass-env GITHUB_TOKEN' });
      }
      const { env, withheld } = childEnvironment(process.env, passEnv);
      if (withheld.length > 0) streams.stderr.write(`episode-factory proxy: not passing ${withheld.join(', ')} to the server (let one through with --pass-env NAME)\n`);
      const [executable, ...args] = command;
      let log: JsonlAppender | undefined;
      if (flags.log !== undefined) {
        try {
          log = new JsonlAppender(flags.log, 'append');
        } catch (error) {
          throw new FactoryError('usage', `cannot write the fault log ${flags.log}: ${(error as Error).message}`, {
            fix: 'pass --log with a path this process can write, e.g. --log /tmp/proxy-faults.jsonl',
          });
        }
      }
      let result;
      try {
        result = await runProxy({
          plan,
          seed: Number(flags.seed),
          command: executable!,
          args,
          env,
          log: (entry) => log?.append(entry),
          input: process.stdin,
          output: process.stdout,
          diagnostics: streams.stderr,
        });
      } catch (error) {
        if (!(error instanceof ProxyStartError)) throw error;
        throw new FactoryError('usage', `cannot start the server "${command.join(' ')}": ${error.message}`, {
          fix: 'check the command after -- (it must start an MCP server on stdio)',
        });
      } finally {
        log?.close();
      }
      streams.stderr.write(`episode-factory proxy: session ended (${result.ended}); ${result.faults} fault${result.faults === 1 ? '' : 's'} fired${log ? `, logged to ${flags.log}` : ''}\n`);
      if (result.ended === 'server_exited' && !result.handshake) {
        throw new FactoryError('usage', `the server "${command.join(' ')}" exited before answering initialize`, {
          fix: 'run the command on its own to see why it stops; it must serve MCP on stdio',
        });
      }
      setExit(0);
    });
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
