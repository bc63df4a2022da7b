// Owns the lanes an experiment derives from the user's lane, each written as a
// file beside the run (so its records name a lane that can be read again) and
// loaded through the ordinary loader and checks:
// - `clean`: the same tasks and world with no faults, played only by the clean
//   variant (the ablation's "clean episodes only");
// - `each`: every scripted variant plays every task and seed (the pairs DPO
//   learns from sit side by side);
// - `eval`: the lane as written, with greedy decoding for a model policy, so an
//   evaluation is the same bytes every time.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseLane } from '../lanes/lane-loader.js';
import { writeFileAtomically } from '../records/atomic-file.js';
import type { Lane, LaneDocument } from '../lanes/lane.js';

export type DerivedLane = 'clean' | 'each' | 'eval';

/** Tokens a model may write in one turn of an evaluation: a call or an answer of these worlds is well under this. */
export const EVAL_MAX_OUTPUT_TOKENS = 384;

function derivedDocument(lane: Lane, kind: DerivedLane): LaneDocument {
  const document = structuredClone(lane.document) as LaneDocument & { rewrites?: unknown };
  const name = `${lane.name}-${kind}`;
  // A lane's rewrites cache is resolved beside its file: the derived lane carries the phrasings already applied.
  delete document.rewrites;
  if (kind === 'clean') {
    delete document.faults;
    return { ...document, name, description: `${lane.name} with no faults, played by the clean variant only (an experiment's ablation).`, policy: { ...document.policy, variants: { clean: 1 } } };
  }
  if (kind === 'each') {
    return { ...document, name, description: `${lane.name} with every scripted variant on every task and seed (an experiment's preference pairs).`, policy: { ...document.policy, draw: 'each' } };
  }
  return {
    ...document,
    name,
    description: `${lane.name} as written, decoded greedily when a model plays (an experiment's evaluation).`,
    model: { ...document.model, temperature: 0, max_output_tokens: EVAL_MAX_OUTPUT_TOKENS },
  };
}

/** The derived lane, written to `<dir>/<lane>-<kind>.json` and loaded from there. */
export function deriveLane(lane: Lane, kind: DerivedLane, dir: string): Lane {
  mkdirSync(dir, { recursive: true });
  const document = derivedDocument(lane, kind);
  const path = join(dir, `${document.name}.json`);
  // The source's $schema is a path relative to its own folder: wrong from here, so it is left out.
  const text = JSON.stringify({ ...document, $schema: undefined }, null, 2) + '\n';
  writeFileAtomically(path, text);
  return parseLane(text, path);
}
