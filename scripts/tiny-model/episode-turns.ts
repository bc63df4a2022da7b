// Owns reading a corpus split's records for the tiny model's scripts. Which
// assistant turns are learned (and judged by the check) is the experiment's
// rule, shared: src/experiment/training-corpus.ts.

import { readEpisodes } from '../../src/experiment/training-data.js';

export { trainedTurns as lossTurns } from '../../src/experiment/training-corpus.js';
export const readRecords = readEpisodes;
