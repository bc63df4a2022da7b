// Owns when two model names mean the same model. The rule is Ollama's (a name
// without a tag is `:latest`), but every provider meets it: OpenAI-compatible
// servers in front of Ollama list its names, and our engine answers to them.

/** `nomic-embed-text` and `nomic-embed-text:latest` are the same model; a tag lives after the last path segment's colon. */
function withTag(name: string): string {
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  return lastSegment.includes(':') ? name : `${name}:latest`;
}

export function sameModel(requested: string, listed: string): boolean {
  return withTag(requested) === withTag(listed);
}
