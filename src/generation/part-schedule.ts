// Owns how a run's missing episodes are cut into parts for worker threads:
// parts shrink as the work left shrinks (guided self-scheduling), so that
// whichever thread takes the last part finishes about when the others do,
// instead of one thread running a full-size part alone at the end. Parts are
// handed out in plan order to whichever thread asks next; where a part starts
// and ends never changes a record, only what a kill can cost.

/** The smallest part: sealing one costs a few file writes, which a handful of episodes repays. */
export const MIN_PART_EPISODES = 5;

/**
 * Cuts `ranges` (in plan order) into parts of at most `maxPart` episodes, each
 * a share of the episodes not yet cut: 1 / (2 × workers) of them, never fewer
 * than MIN_PART_EPISODES (the last part of a range may be smaller).
 */
export function guidedParts(ranges: readonly { start: number; end: number }[], workers: number, maxPart: number): { start: number; end: number }[] {
  let left = ranges.reduce((sum, range) => sum + range.end - range.start, 0);
  const out: { start: number; end: number }[] = [];
  for (const range of ranges) {
    for (let start = range.start; start < range.end; ) {
      const size = Math.max(1, Math.min(maxPart, Math.max(MIN_PART_EPISODES, Math.ceil(left / (2 * workers)))));
      const end = Math.min(range.end, start + size);
      out.push({ start, end });
      left -= end - start;
      start = end;
    }
  }
  return out;
}
