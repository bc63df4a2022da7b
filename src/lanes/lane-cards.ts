// Owns finding the lanes a dataset came from for its card: each lane is looked
// up by the name its records carry (as replay and audit find them), or read
// from one file the user names, and its dataset_card (license, task
// categories) handed to the card.

import { errorMessage } from '../core/errors.js';
import type { LaneDocument } from './lane.js';
import { loadLane } from './lane-loader.js';

/** What a lane gives a dataset card: its dataset_card (none when it sets none), or why the lane could not be read. */
export type LaneCardLookup = { card: LaneDocument['dataset_card'] } | { error: string };

export function laneCardReader(options: { lane?: string; cwd?: string } = {}): (names: readonly string[]) => Map<string, LaneCardLookup> {
  return (names) => {
    const found = new Map<string, LaneCardLookup>();
    for (const name of names) {
      try {
        found.set(name, { card: loadLane(options.lane ?? name, options.cwd).document.dataset_card });
      } catch (error) {
        found.set(name, { error: errorMessage(error) });
      }
    }
    return found;
  };
}
