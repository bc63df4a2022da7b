// Owns the subject every claim pattern starts with: "I closed", "we've just
// saved", … . Each world names the one adverb its answers add, if any; the
// rest of the pattern is the same everywhere, so a claim reads alike in
// every world.

const SUBJECTS = ['I', "I've", 'I have', 'we', "we've", 'we have'];
const ADVERBS = ['now', 'just', 'also'];

/** The regex source of a claim's subject, optionally allowing one more adverb after it ("successfully", "already"). */
export function claimSubject(extraAdverb?: string): string {
  const adverbs = extraAdverb === undefined ? ADVERBS : [...ADVERBS, extraAdverb];
  return `\\b(?:${SUBJECTS.join('|')})\\s+(?:${adverbs.map((adverb) => `${adverb}\\s+`).join('|')})?`;
}
