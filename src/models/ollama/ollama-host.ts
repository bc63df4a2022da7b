// Owns where Ollama is and how it names models, for every part of the factory
// that talks to it (the chat model, the embedder). The official client
// ignores OLLAMA_HOST, so the variable is read here.

export const DEFAULT_OLLAMA_HOST = 'http://127.0.0.1:11434';

/** An explicit host, else OLLAMA_HOST, else the local default. */
export function resolveOllamaHost(explicit?: string, environment: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit?.trim() || environment.OLLAMA_HOST?.trim();
  return chosen ? chosen : DEFAULT_OLLAMA_HOST;
}

/** `nomic-embed-text` and `nomic-embed-text:latest` are the same model to Ollama; a tag lives after the last path segment's colon. */
function withTag(name: string): string {
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  return lastSegment.includes(':') ? name : `${name}:latest`;
}

export function sameModel(requested: string, listed: string): boolean {
  return withTag(requested) === withTag(listed);
}
