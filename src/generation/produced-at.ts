// Owns the one date a record carries: `produced_at` comes from
// SOURCE_DATE_EPOCH when it is set (reproducible-builds convention) and from
// the lane's pinned date otherwise, never from the clock.

import { FactoryError } from '../core/errors.js';
import type { Lane } from '../lanes/lane.js';

export function resolveProducedAt(lane: Lane, environment: NodeJS.ProcessEnv = process.env): string {
  const epoch = environment.SOURCE_DATE_EPOCH;
  if (epoch !== undefined && epoch !== '') {
    if (!/^[0-9]{1,12}$/.test(epoch)) {
      throw new FactoryError('usage', `SOURCE_DATE_EPOCH="${epoch}" is not a whole number of seconds`, {
        fix: 'set it to seconds since 1970, e.g. SOURCE_DATE_EPOCH=1767225600, or unset it to use the lane date',
      });
    }
    return isoSeconds(new Date(Number(epoch) * 1000));
  }
  return isoSeconds(new Date(lane.document.produced_at));
}

function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
