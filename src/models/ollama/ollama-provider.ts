// Owns `ollama:<model>` as a provider of chat models: the model at
// --ollama-host (else OLLAMA_HOST, else the local default), checked before
// any episode runs by ollama-inspection.ts (Ollama answers, the model is
// pulled, its digest pins it), and --ollama-host refused when no Ollama model
// plays.

import { FactoryError } from '../../core/errors.js';
import type { ChatModelProvider } from '../chat-model-provider.js';
import { OllamaChatModel, OLLAMA_MODES } from './ollama-chat-model.js';
import { resolveOllamaHost } from './ollama-host.js';
import { inspectModel } from './ollama-inspection.js';

export const ollamaProvider: ChatModelProvider = {
  name: 'ollama',
  example: 'ollama:<model> (e.g. ollama:qwen2.5:1.5b)',
  modes: OLLAMA_MODES,
  refuseStrayFlags(options) {
    if (options.host !== undefined) {
      throw new FactoryError('usage', '--ollama-host applies to ollama:<model>, and none plays here', { fix: 'drop --ollama-host (an OpenAI-compatible server is found with --base-url)' });
    }
  },
  async check(model, options) {
    const info = await inspectModel(resolveOllamaHost(options.host, options.environment), model, { timeoutMs: options.startupTimeoutMs });
    return new OllamaChatModel(info, options.timeoutMs);
  },
};
