// Owns where Ollama is, for every part of the factory
// that talks to it (the chat model, the embedder). The official client
// ignores OLLAMA_HOST, so the variable is read here.

export const DEFAULT_OLLAMA_HOST = 'http://127.0.0.1:11434';

/** An explicit host, else OLLAMA_HOST, else the local default. */
export function resolveOllamaHost(explicit?: string, environment: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit?.trim() || environment.OLLAMA_HOST?.trim();
  return chosen ? chosen : DEFAULT_OLLAMA_HOST;
}
