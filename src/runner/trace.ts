// Owns the episode trace: the authoritative, ordered record of what happened,
// one JSON event a line with a schema id, a run id and a monotonic `seq`, each
// line handed to the OS as it is written. Wall-clock times live here and only
// here; records never carry them.

import type { JsonObject } from '../core/json-value.js';
import { JsonlAppender, readJsonl, type JsonlProblem } from '../records/jsonl.js';

export const TRACE_SCHEMA = 'episode-factory.trace.v1';

export interface TraceEvent {
  schema: typeof TRACE_SCHEMA;
  run_id: string;
  seq: number;
  /** Milliseconds since the trace was opened. */
  t_ms: number;
  /** Which pass produced it: the episode itself, or its replay. */
  phase: string;
  event_type: string;
  data: JsonObject;
}

export interface TraceSink {
  emit(eventType: string, data: JsonObject): void;
}

export const NULL_TRACE: TraceSink = { emit() {} };

/** One trace file (or an in-memory list); phases share its `seq` counter. */
export class Trace {
  readonly events: TraceEvent[] | undefined;
  private seq = 0;
  private readonly started: number;

  constructor(
    readonly runId: string,
    private readonly appender: JsonlAppender | undefined,
    private readonly clock: () => number = () => performance.now(),
    options: { keepInMemory?: boolean } = {},
  ) {
    this.started = clock();
    this.events = options.keepInMemory ? [] : undefined;
  }

  phase(phase: string): TraceSink {
    return { emit: (eventType, data) => this.write(phase, eventType, data) };
  }

  private write(phase: string, eventType: string, data: JsonObject): void {
    const event: TraceEvent = {
      schema: TRACE_SCHEMA,
      run_id: this.runId,
      seq: ++this.seq,
      t_ms: Math.round((this.clock() - this.started) * 1000) / 1000,
      phase,
      event_type: eventType,
      data,
    };
    this.appender?.append(event);
    this.events?.push(event);
  }

  close(): void {
    this.appender?.close();
  }
}

export async function readTrace(path: string): Promise<{ events: TraceEvent[]; problems: JsonlProblem[] }> {
  const { rows, problems } = await readJsonl<TraceEvent>(path);
  const events: TraceEvent[] = [];
  let previous = 0;
  for (const row of rows) {
    if (row.value?.schema !== TRACE_SCHEMA) {
      problems.push({ line: row.line, reason: `not a trace event (schema is ${JSON.stringify(row.value?.schema)})` });
      continue;
    }
    if (!(row.value.seq > previous)) problems.push({ line: row.line, reason: `seq ${row.value.seq} does not follow ${previous}` });
    previous = row.value.seq;
    events.push(row.value);
  }
  return { events, problems };
}
