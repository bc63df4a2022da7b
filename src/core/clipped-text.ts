// Owns shortening text for a person to read (a table cell, a chart label, a
// diff, the start of a body an error quotes): the cut marked with an
// ellipsis, so a cut is never mistaken for the whole text.

export function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/** The start of a body an error message quotes: trimmed, its first `limit` characters, in JSON quotes so line breaks and blanks show. */
export function textPreview(text: string, limit = 60): string {
  const trimmed = text.trim();
  return JSON.stringify(trimmed.length > limit ? `${trimmed.slice(0, limit)}…` : trimmed);
}
