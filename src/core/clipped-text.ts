// Owns shortening text for a person to read (a table cell, a chart label, a
// diff): at most `max` characters, the cut marked with an ellipsis, so a cut
// is never mistaken for the whole text.

export function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}
