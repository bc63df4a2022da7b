// Owns how the report groups one record: its world (name and version), its
// policy (scripted by variant, a model by model and digest) and the kinds of
// fault that fired in it.

import type { JsonObject } from '../core/json-value.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { compareKeys } from './key-order.js';

export function worldKey(record: EpisodeRecord): string {
  return `${record.world.name}@${record.world.version}`;
}

export function policyActor(record: EpisodeRecord): JsonObject | undefined {
  return record.provenance.actors.find((actor) => actor.role === 'policy');
}

/** Scripted episodes by variant; model episodes by model and digest, so two builds of one tag stay apart. */
export function policyKey(record: EpisodeRecord): string {
  const actor = policyActor(record);
  const variant = record.provenance.lineage.variant;
  if (actor?.kind === 'model') return `${variant} @${String(actor.version)}`;
  if (actor !== undefined && actor.name !== 'scripted-solution') return `${String(actor.name)} ${variant}`;
  return variant;
}

export function faultKinds(record: EpisodeRecord): string[] {
  return [...new Set(record.recovery.faults_fired.map((fault) => fault.kind))].sort(compareKeys);
}
