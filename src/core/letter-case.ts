// Owns the one letter-case rule generated text needs: a capital first letter.

export function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
