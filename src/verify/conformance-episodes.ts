// Owns the scripted episodes the world conformance suite draws from the lane
// that names the world: produced once per run of the suite and shared, so the
// replay check replays the first and the fault check can call tools with
// arguments a real solution used (made-up arguments cannot name an order id).

import type { EpisodeSpec } from '../lanes/episode-plan.js';
import type { Lane } from '../lanes/lane.js';
import { ScriptedPolicy } from '../policy/scripted-policy.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import type { ScriptedVariant } from '../solutions/solution-script.js';
import type { JsonObject } from '../core/json-value.js';
import { isJsonObject } from '../core/json-value.js';
import { produceEpisode, type PolicyFactory } from './episode-production.js';

/** Enough tasks that a read and a write are usually among their calls, few enough to stay quick. */
const EPISODE_TASKS = 4;

export interface LaneEpisode {
  spec: EpisodeSpec;
  record: EpisodeRecord;
  /** The record as episodes.jsonl would hold it. */
  line: string;
}

/** The scripted policy in the variant each seed draws, as `generate` plays a scripted lane. */
const scriptedPolicy: PolicyFactory = (request) =>
  new ScriptedPolicy({ script: request.script, variant: request.variant as ScriptedVariant, random: request.random, ...(request.dialogue ? { dialogue: request.dialogue } : {}) });

/** The first tasks of `lane`, each played once on the lane's first seed. */
export async function produceLaneEpisodes(lane: Lane): Promise<LaneEpisode[]> {
  const episodes: LaneEpisode[] = [];
  for (const task of lane.document.tasks.slice(0, EPISODE_TASKS)) {
    const spec: EpisodeSpec = { lane, task, seed: lane.seeds.from };
    const record = await produceEpisode(spec, scriptedPolicy, { producedAt: lane.document.produced_at });
    episodes.push({ spec, record, line: JSON.stringify(record) });
  }
  return episodes;
}

/** Every tool call the episodes made, in order, each once. */
export function recordedCalls(episodes: readonly LaneEpisode[]): Array<{ name: string; args: JsonObject }> {
  const seen = new Set<string>();
  const calls: Array<{ name: string; args: JsonObject }> = [];
  for (const { record } of episodes) {
    for (const message of record.messages) {
      if (message.role !== 'assistant') continue;
      for (const call of message.tool_calls ?? []) {
        const key = `${call.name}\u0000${call.arguments}`;
        if (seen.has(key)) continue;
        seen.add(key);
        let args: unknown;
        try {
          args = JSON.parse(call.arguments);
        } catch {
          continue;
        }
        if (isJsonObject(args)) calls.push({ name: call.name, args });
      }
    }
  }
  return calls;
}
