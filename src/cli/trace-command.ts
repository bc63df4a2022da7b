// Owns the `trace` command: one episode's events, found by record id through
// the dataset's trace index, printed one line each (or as JSON). The archive a
// run keeps per part is not meant to be read whole by a person.

import type { Command } from 'commander';
import { readEpisodeTrace } from '../runner/trace-archive.js';
import type { TraceEvent } from '../runner/trace.js';
import { type Streams, writeJson } from './output.js';

interface TraceFlags {
  json?: boolean;
  phase?: string;
}

/** The event's data on one line, without repeating what the columns already say. */
function describe(event: TraceEvent): string {
  const text = JSON.stringify(event.data);
  return text === '{}' ? '' : text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

export function registerTrace(program: Command, streams: Streams, setExit: (status: number) => void): void {
  program
    .command('trace')
    .summary("print one episode's trace events, found by its record id")
    .description(
      "Prints the events of one episode (written or rejected) from <dir>/traces/: generate, replay and verify, in the " +
        "order they happened, one line each: seq, milliseconds since the episode's trace opened, phase, event type and " +
        'its data. The episode is found through traces/index.jsonl, which names the part archive that holds it; only that ' +
        'archive is read. A torn or damaged line is reported on stderr (exit 1), the events before and after it are still ' +
        'printed. Exit 0; 1 the trace has problems; 2 when <dir> has no trace index or the record id is not in it.',
    )
    .argument('<dir>', 'a dataset directory written by generate or merge (holds traces/index.jsonl)')
    .argument('<record_id>', 'the record id, as in episodes.jsonl or rejected.jsonl')
    .option('--phase <phase>', 'only the events of this pass: generate, replay or verify')
    .option('--json', 'print {record_id, events, problems} as JSON')
    .addHelpText('after', '\nExamples:\n  episode-factory trace datasets/tool-world-v1 tool-world-v1.find-open-bugs.s0\n  episode-factory trace datasets/tool-world-faults-v1 <record_id> --phase replay --json')
    .action(async (dir: string, recordId: string, flags: TraceFlags) => {
      const { events, problems } = await readEpisodeTrace(dir, recordId);
      const shown = flags.phase === undefined ? events : events.filter((event) => event.phase === flags.phase);
      if (problems.length > 0) setExit(1);
      if (flags.json) return writeJson(streams, { record_id: recordId, events: shown, problems });
      for (const problem of problems) streams.stderr.write(`trace ${recordId}: line ${problem.line}: ${problem.reason}\n`);
      for (const event of shown) {
        streams.stdout.write(`${String(event.seq).padStart(4)}  ${event.t_ms.toFixed(3).padStart(10)} ms  ${event.phase.padEnd(8)} ${event.event_type.padEnd(26)} ${describe(event)}`.trimEnd() + '\n');
      }
    });
}
