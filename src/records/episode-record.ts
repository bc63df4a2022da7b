// Owns the episode record: the dataset card's fields (record_id, family, tools,
// messages, recovery, result, provenance) plus what the factory knows beyond
// them. schemas/episode-record.v1.schema.json is the authority; these types
// mirror it.

import type { Message, ToolDescriptor } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';

export const RECORD_FAMILY = 'mcp-tool-use-episode';
export const RECORD_SCHEMA_VERSION = 'episode-record.v1';

export interface PredicateResult {
  id: string;
  passed: boolean;
  detail?: string;
}

export interface FaultFired {
  kind: string;
  /** The plan entry that fired. */
  fault: string;
  /** The model turn it fired in; 0 is the catalog listing before the first turn. */
  step: number;
  tool: string | null;
  call: number | null;
  detail: string;
}

export interface CatalogUpdateRecord {
  before_message: number;
  removed: string[];
  added: ToolDescriptor[];
}

export interface Lineage {
  lane: string;
  lane_sha256: string;
  task: string;
  variant: string;
  seed: number;
  /** "generate" for originals; later operations (dedup, merge) name themselves. */
  operation: string;
  source_record_id: string | null;
  generate_command: string;
  replay_command: string;
  factory_version: string;
}

export interface EpisodeRecord {
  record_id: string;
  family: typeof RECORD_FAMILY;
  schema_version: typeof RECORD_SCHEMA_VERSION;
  world: { name: string; version: string };
  task: { id: string; title: string; tags: string[] };
  tools: ToolDescriptor[];
  messages: Message[];
  catalog_updates: CatalogUpdateRecord[];
  recovery: {
    /** Tool messages with ok:false, whatever the cause. */
    error_turns: number;
    /** At least one error turn or fired fault, and the task was still completed. */
    recovered: boolean;
    faults_fired: FaultFired[];
  };
  result: {
    task_completed: boolean;
    verified_by: 'replay';
    outcome: string;
    outcome_detail?: string;
    predicates: PredicateResult[];
    steps: number;
    tool_calls: number;
    rejected_calls: number;
    initial_snapshot_sha256: string;
    final_snapshot_sha256: string;
  };
  provenance: {
    produced_at: string;
    actors: JsonObject[];
    lineage: Lineage;
  };
}

export interface RejectedRow {
  record_id: string;
  lane: string;
  task: string;
  seed: number;
  /** Where it failed: plan (task parameters), run, schema, or replay. */
  stage: 'plan' | 'run' | 'schema' | 'replay';
  reason: string;
  record: EpisodeRecord | null;
}
