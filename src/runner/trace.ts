// Owns the episode trace: the authoritative, ordered record of what happened,
// one JSON event a line with a schema id, a run id and a monotonic `seq`, each
// line handed to its output as it is written. Several episodes may share one
// output (a part's trace archive): each event then names its record_id, and
// `seq` still counts within the episode. Wall-clock times live here and only
// here; records never carry them.

import type { JsonObject } from '../core/json-value.js';
import { readJsonl, type JsonlProblem } from '../records/jsonl.js';

export const TRACE_SCHEMA = 'episode-factory.trace.v1';

export interface TraceEvent {
  schema: typeof TRACE_SCHEMA;
  run_id: string;
  /** The episode, when its events share a file with other episodes' (a part's trace archive). */
  record_id?: string;
  /** Counts within the episode. */
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

/** Where a trace's events go: a JsonlAppender of its own, or a view of a shared archive whose close leaves it open. */
export interface TraceOutput {
  append(event: TraceEvent): void;
  close(): void;
}

/** One episode's trace (or an in-memory list); phases share its `seq` counter. */
export class Trace {
  readonly events: TraceEvent[] | undefined;
  private seq = 0;
  private readonly started: number;
  private readonly recordId: string | undefined;

  constructor(
    readonly runId: string,
    private readonly appender: TraceOutput | undefined,
    private readonly clock: () => number = () => performance.now(),
    options: { keepInMemory?: boolean; recordId?: string } = {},
  ) {
    this.started = clock();
    this.events = options.keepInMemory ? [] : undefined;
    this.recordId = options.recordId;
  }

  phase(phase: string): TraceSink {
    return { emit: (eventType, data) => this.write(phase, eventType, data) };
  }

  private write(phase: string, eventType: string, data: JsonObject): void {
    const event: TraceEvent = {
      schema: TRACE_SCHEMA,
      run_id: this.runId,
      ...(this.recordId === undefined ? {} : { record_id: this.recordId }),
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

/** Checks one line of a trace: a trace event whose `seq` follows the last one of its episode (`previous`, by record_id). */
export function traceEventProblem(value: unknown, previous: Map<string, number>): string | undefined {
  const event = value as TraceEvent | null;
  if (event?.schema !== TRACE_SCHEMA) return `not a trace event (schema is ${JSON.stringify(event?.schema)})`;
  const episode = event.record_id ?? '';
  const last = previous.get(episode) ?? 0;
  previous.set(episode, event.seq);
  if (!(event.seq > last)) return `seq ${event.seq} does not follow ${last}${event.record_id === undefined ? '' : ` for ${event.record_id}`}`;
  return undefined;
}

/** A whole trace file: one episode's, or a part's archive of many (each episode's `seq` checked on its own). */
export async function readTrace(path: string): Promise<{ events: TraceEvent[]; problems: JsonlProblem[] }> {
  const { rows, problems } = await readJsonl<TraceEvent>(path);
  const events: TraceEvent[] = [];
  const previous = new Map<string, number>();
  for (const row of rows) {
    const problem = traceEventProblem(row.value, previous);
    if (problem !== undefined) problems.push({ line: row.line, reason: problem });
    if (row.value?.schema === TRACE_SCHEMA) events.push(row.value);
  }
  return { events, problems };
}
