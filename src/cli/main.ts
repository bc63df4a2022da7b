// Owns the command-line program: commander wiring, one file per command, and
// the mapping of every failure to an exit status (0 success, 1 a check
// failed, 2 a usage or precondition problem).

import { Command, CommanderError } from 'commander';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { PROGRAM, processStreams, reportError, type Streams } from './output.js';
import { isHelpOrVersion, reportUsageErrorsInProjectStyle, usageError } from './usage-errors.js';

type Register = (program: Command, streams: Streams, setExit: (status: number) => void) => void;

/**
 * Each command's module, loaded only when needed: a run of one command loads
 * that command's libraries and no other's (a generate run does not carry the
 * HTTP host, the Ollama client or the report code), which keeps the
 * process's memory flat and its start fast. Help loads them all.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  generate: async () => (await import('./generate-command.js')).registerGenerate,
  replay: async () => (await import('./replay-command.js')).registerReplay,
  lanes: async () => (await import('./lanes-command.js')).registerLanes,
  worlds: async () => (await import('./worlds-command.js')).registerWorlds,
  serve: async () => (await import('./serve-command.js')).registerServe,
  proxy: async () => (await import('./proxy-command.js')).registerProxy,
  env: async () => (await import('./env-command.js')).registerEnv,
  gate: async () => (await import('./gate-command.js')).registerGate,
  dedup: async () => (await import('./dedup-command.js')).registerDedup,
  audit: async () => (await import('./audit-command.js')).registerAudit,
  split: async () => (await import('./split-command.js')).registerSplit,
  merge: async () => (await import('./merge-command.js')).registerMerge,
  export: async () => (await import('./export-command.js')).registerExport,
  stats: async () => (await import('./stats-command.js')).registerStats,
  card: async () => (await import('./card-command.js')).registerCard,
  report: async () => (await import('./report-command.js')).registerReport,
  trace: async () => (await import('./trace-command.js')).registerTrace,
  engine: async () => (await import('./engine-command.js')).registerEngine,
  experiment: async () => (await import('./experiment-command.js')).registerExperiment,
};

/** The program with every command, or with only `only` when the command line names one. */
export async function buildProgram(streams: Streams, setExit: (status: number) => void, only?: string): Promise<Command> {
  const program = new Command(PROGRAM)
    .description(
      'Manufactures verified training data for tool-using language models: multi-turn MCP tool-use episodes ' +
        '(wrong arguments, repairs, recoveries) driven against real MCP servers, replayed on a fresh world and judged ' +
        'by hidden predicates before they are written as provenance-stamped records.',
    )
    .version(FACTORY_VERSION)
    // Only help and the version go through commander's output; its errors are said by usage-errors.ts.
    .configureOutput({ writeOut: (text) => streams.stdout.write(text) });
  const names = only !== undefined && only in COMMANDS ? [only] : Object.keys(COMMANDS);
  for (const name of names) (await COMMANDS[name]!())(program, streams, setExit);
  program.addHelpText(
    'after',
    '\nQuick start:\n  episode-factory generate tool-world-v1     # writes datasets/tool-world-v1/\n  episode-factory replay datasets/tool-world-v1\n  episode-factory report datasets/tool-world-v1     # writes datasets/tool-world-v1/report.html\n  episode-factory lanes list\n\nExit status: 0 success, 1 a check failed (rejected or unverifiable records), 2 a usage or precondition problem.',
  );
  reportUsageErrorsInProjectStyle(program);
  return program;
}

/** Runs the CLI and returns its exit status; never calls process.exit itself. */
export async function main(argv: readonly string[], streams: Streams = processStreams): Promise<number> {
  let status = 0;
  const program = await buildProgram(
    streams,
    (value) => {
      status = value;
    },
    argv[2],
  );
  try {
    await program.parseAsync([...argv]);
    return status;
  } catch (error) {
    // --help, `help` and --version asked for. Every other commander error arrives here as a UsageError already;
    // one raised some other way (an action throwing commander's InvalidArgumentError) is said the same way.
    if (error instanceof CommanderError && isHelpOrVersion(error)) return 0;
    const reported = error instanceof CommanderError ? usageError(program, error) : error;
    return reportError(reported, streams, { json: argv.includes('--json') });
  }
}
