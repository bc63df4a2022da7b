// Owns the report's overview tallied one record at a time: the worlds, tasks,
// policies (with their models' digests and details), user simulators and
// lanes, and when and by which factory version the records were produced.

import { actorPin } from '../models/model-pin.js';
import type { JsonObject } from '../core/json-value.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { compareKeys } from './key-order.js';
import type { ReportLane, ReportOverview, ReportPolicy, ReportTask, ReportUserSimulator, ReportWorld } from './report-model.js';
import { policyActor, policyKey, worldKey } from './report-record-keys.js';

function describePolicy(actor: JsonObject | undefined): Pick<ReportPolicy, 'kind' | 'name' | 'version' | 'digest' | 'details'> {
  if (actor === undefined) return { kind: 'unknown', name: 'unknown', version: '', digest: null, details: [] };
  const details: string[] = [];
  for (const field of ['provider', 'family', 'parameter_size', 'quantization', 'mode', 'codec', 'ollama_version', 'server', 'server_version', 'weights']) {
    const value = actor[field];
    if (typeof value === 'string' && value !== '') details.push(`${field.replace(/_/g, ' ')} ${value}`);
  }
  return {
    kind: String(actor.kind),
    name: String(actor.name),
    version: String(actor.version),
    // A served model pinned by its weights' revision has no digest: the pin stands in for it.
    digest: actorPin(actor) ?? null,
    details,
  };
}

/** Worlds, tasks, policies and lanes, tallied one record at a time. */
export class OverviewTally {
  private readonly worlds = new Map<string, ReportWorld>();
  private readonly tasks = new Map<string, ReportTask>();
  private readonly policies = new Map<string, ReportPolicy>();
  private readonly users = new Map<string, ReportUserSimulator>();
  private readonly lanes = new Map<string, ReportLane>();
  private readonly producedAt = new Set<string>();
  private readonly factoryVersions = new Set<string>();

  add(record: EpisodeRecord): void {
    const world = this.worlds.get(worldKey(record)) ?? { name: record.world.name, version: record.world.version, records: 0, tools: 0 };
    world.records++;
    world.tools = Math.max(world.tools, record.tools.length);
    this.worlds.set(worldKey(record), world);
    const task = this.tasks.get(record.task.id) ?? { id: record.task.id, title: record.task.title, world: record.world.name, records: 0 };
    task.records++;
    this.tasks.set(record.task.id, task);
    const key = policyKey(record);
    const policy = this.policies.get(key) ?? { key, ...describePolicy(policyActor(record)), records: 0 };
    policy.records++;
    this.policies.set(key, policy);
    for (const actor of record.provenance.actors.filter((each) => each.role === 'user')) {
      const userKey = `${String(actor.kind)}:${String(actor.name)}@${String(actor.version)}`;
      const digest = typeof actor.digest === 'string' ? actor.digest : null;
      // Two builds of one model tag are two simulators.
      const mapKey = `${userKey}\u0000${digest ?? ''}`;
      const user = this.users.get(mapKey) ?? { key: userKey, kind: String(actor.kind), name: String(actor.name), version: String(actor.version), digest, records: 0 };
      user.records++;
      this.users.set(mapKey, user);
    }
    const lineage = record.provenance.lineage;
    // A lane edited between runs has a new hash: each (name, hash) is its own row.
    const laneKey = `${lineage.lane}\u0000${lineage.lane_sha256}`;
    const lane = this.lanes.get(laneKey) ?? { name: lineage.lane, sha256: lineage.lane_sha256, records: 0 };
    lane.records++;
    this.lanes.set(laneKey, lane);
    this.producedAt.add(record.provenance.produced_at);
    this.factoryVersions.add(lineage.factory_version);
  }

  finish(): Pick<ReportOverview, 'worlds' | 'tasks' | 'policies' | 'user_simulators' | 'lanes' | 'produced_at' | 'factory_versions'> {
    const sorted = <T>(map: Map<string, T>): T[] => [...map.keys()].sort(compareKeys).map((key) => map.get(key)!);
    return {
      worlds: sorted(this.worlds),
      tasks: sorted(this.tasks),
      policies: sorted(this.policies),
      user_simulators: sorted(this.users),
      lanes: sorted(this.lanes),
      produced_at: [...this.producedAt].sort(compareKeys),
      factory_versions: [...this.factoryVersions].sort(compareKeys),
    };
  }
}
