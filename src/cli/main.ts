// Owns the command-line program: commander wiring, one file per command, and
// the mapping of every failure to an exit status (0 success, 1 a check
// failed, 2 a usage or precondition problem).

import { Command, CommanderError } from 'commander';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { registerAudit } from './audit-command.js';
import { registerCard } from './card-command.js';
import { registerDedup } from './dedup-command.js';
import { registerExport } from './export-command.js';
import { registerGate } from './gate-command.js';
import { registerGenerate } from './generate-command.js';
import { registerLanes } from './lanes-command.js';
import { registerMerge } from './merge-command.js';
import { registerServe } from './serve-command.js';
import { registerWorlds } from './worlds-command.js';
import { PROGRAM, processStreams, reportError, type Streams } from './output.js';
import { registerProxy } from './proxy-command.js';
import { registerReplay } from './replay-command.js';
import { registerSplit } from './split-command.js';
import { registerStats } from './stats-command.js';

export function buildProgram(streams: Streams, setExit: (status: number) => void): Command {
  const program = new Command(PROGRAM)
    .description(
      'Manufactures verified training data for tool-using language models: multi-turn MCP tool-use episodes ' +
        '(wrong arguments, repairs, recoveries) driven against real MCP servers, replayed on a fresh world and judged ' +
        'by hidden predicates before they are written as provenance-stamped records.',
    )
    .version(FACTORY_VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (text) => streams.stdout.write(text),
      writeErr: (text) => streams.stderr.write(text),
    })
    .exitOverride();
  registerGenerate(program, streams, setExit);
  registerReplay(program, streams, setExit);
  registerLanes(program, streams, setExit);
  registerWorlds(program, streams);
  registerServe(program, streams, setExit);
  registerProxy(program, streams, setExit);
  registerGate(program, streams, setExit);
  registerDedup(program, streams, setExit);
  registerAudit(program, streams, setExit);
  registerSplit(program, streams);
  registerMerge(program, streams);
  registerExport(program, streams);
  registerStats(program, streams);
  registerCard(program, streams);
  program.addHelpText(
    'after',
    '\nQuick start:\n  episode-factory generate tool-world-v1     # writes datasets/tool-world-v1/\n  episode-factory replay datasets/tool-world-v1\n  episode-factory lanes list\n\nExit status: 0 success, 1 a check failed (rejected or unverifiable records), 2 a usage or precondition problem.',
  );
  for (const command of program.commands) command.exitOverride().configureOutput(program.configureOutput());
  return program;
}

/** Runs the CLI and returns its exit status; never calls process.exit itself. */
export async function main(argv: readonly string[], streams: Streams = processStreams): Promise<number> {
  let status = 0;
  const program = buildProgram(streams, (value) => {
    status = value;
  });
  try {
    await program.parseAsync([...argv]);
    return status;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version asked for; anything else (no command, a bad option) is a usage problem.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      return 2;
    }
    return reportError(error, streams, { json: argv.includes('--json') });
  }
}
