// Owns the fault plan: the data that says which faults may fire at the MCP
// boundary, where, how often and with what parameters
// (schemas/fault-plan.v1.schema.json), and the defaults applied to it.

import type { JsonObject } from '../../core/json-value.js';

export const FAULT_KINDS = [
  'empty_first_page',
  'paginate_tools',
  'jsonrpc_error',
  'tool_error',
  'transient',
  'timeout',
  'latency',
  'wrong_result_schema',
  'truncated_result',
  'tool_renamed',
  'disconnect',
  'stale_read',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

/** Faults that act on a catalog listing rather than on a tool call. */
export const LIST_FAULTS: ReadonlySet<FaultKind> = new Set(['empty_first_page', 'paginate_tools']);

export interface FaultEntry {
  id: string;
  kind: FaultKind;
  weight?: number;
  tools?: string[];
  calls?: number[];
  lists?: number[];
  probability?: number;
  max_fires?: number;
  params?: JsonObject;
}

export interface FaultPlan {
  $schema?: string;
  format?: 'episode-factory.fault-plan.v1';
  description?: string;
  select?: 'each' | 'one';
  faults: FaultEntry[];
}

export const EMPTY_PLAN: FaultPlan = { faults: [] };

/** One fault that fired, as recorded in recovery.faults_fired (the runner adds `step`). */
export interface FiredFault {
  kind: FaultKind;
  /** The plan entry that fired. */
  fault: string;
  /** The tool involved, or null for a catalog listing. */
  tool: string | null;
  /** Which tools/call (or catalog listing) it hit, counted from 1. */
  call: number | null;
  detail: string;
  /** For tool_renamed: the name the tool answers to now (null when removed). Not part of records. */
  renamed_to?: string | null;
}

export const DEFAULT_ERROR_MESSAGES = [
  'rate limited, retry after 2s',
  'upstream service unavailable (503), try again',
  'temporary failure: connection reset by peer',
] as const;

export function param<T>(entry: FaultEntry, name: string, fallback: T): T {
  const value = entry.params?.[name];
  return value === undefined ? fallback : (value as T);
}
