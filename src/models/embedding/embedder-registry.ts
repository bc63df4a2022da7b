// Owns finding an embedder by `--embed <provider>:<model>`: the providers
// there are, and the one-line usage errors when a spec names none of them, or
// a server option is given to the wrong provider or with no --embed at all
// (where it would be silently ignored). Adding a provider is adding its file
// and one line here.

import { FactoryError } from '../../core/errors.js';
import type { Embedder } from './embedder.js';
import type { EmbedderOptions, EmbedderProvider } from './embedder-provider.js';
import { OLLAMA_EMBEDDING } from './ollama-embedder.js';
import { OPENAI_EMBEDDING } from './openai-embedder.js';

const PROVIDERS: readonly EmbedderProvider[] = [OLLAMA_EMBEDDING, OPENAI_EMBEDDING];

/** Which options were given, by presence alone: the command checks this before it parses any of them. */
export type GivenEmbedderOptions = { readonly [Key in keyof EmbedderOptions]?: unknown };

/** Refuses an embedding option given without --embed: nothing would read it. */
export function refuseOptionsWithoutEmbedder(given: GivenEmbedderOptions): void {
  for (const provider of PROVIDERS) {
    for (const option of provider.options) {
      if (given[option.key] !== undefined) throw new FactoryError('usage', `${option.flag} was given without --embed`, { fix: `add --embed ${provider.name}:<model>, or drop ${option.flag}` });
    }
  }
  if (given.timeoutMs !== undefined) {
    const choices = PROVIDERS.map((provider) => `--embed ${provider.name}:<model>`).join(' or ');
    throw new FactoryError('usage', '--model-timeout was given without --embed', { fix: `add ${choices}, or drop --model-timeout` });
  }
}

/** The embedder `<provider>:<model>` names; each provider's options apply to it alone. */
export function embedderFromSpec(spec: string, options: EmbedderOptions = {}): Embedder {
  const separator = spec.indexOf(':');
  const name = separator < 0 ? spec : spec.slice(0, separator);
  const model = separator < 0 ? '' : spec.slice(separator + 1).trim();
  const provider = PROVIDERS.find((candidate) => candidate.name === name);
  if (!provider || model === '') {
    throw new FactoryError('usage', `--embed ${spec} is not a provider:model pair this tool knows`, {
      fix: `write ${PROVIDERS.map((candidate) => `--embed ${candidate.usage}`).join(' or ')}`,
    });
  }
  for (const other of PROVIDERS) {
    if (other === provider) continue;
    for (const option of other.options) {
      if (options[option.key] !== undefined) throw new FactoryError('usage', `${option.flag} applies to --embed ${other.name}:<model>`, { fix: option.fixElsewhere });
    }
  }
  return provider.create(model, options);
}
