// Owns what a provider of chat models is to the rest of the factory: the
// prefix of its specs, the modes it can run a policy in, its own server flags
// (refused when none of its models plays), and its start-up check, which
// turns a model name and the flags into a checked ChatModel or one line
// naming the problem and its fix. The registry lists the providers; nothing
// else asks which one a model is.

import type { ChatModel, ModelMode } from './chat-model.js';

/** The server flags a command takes; which apply depends on the provider. */
export interface ModelServerOptions {
  /** --ollama-host (ollama). */
  host?: string;
  /** --base-url (openai); else OPENAI_BASE_URL, else DEFAULT_OPENAI_BASE_URL. */
  baseUrl?: string;
  /** --api-key-env (openai): the name of the variable holding the key, never the key. */
  apiKeyEnv?: string;
  /**
   * --model-digest (openai), each `<digest>` or `<model>=<digest>`: pins
   * weights the server does not. A bare digest is for the one served model
   * named; the provider refuses it when there are two.
   */
  modelDigests?: readonly string[];
  /** The longest the server may stay silent on one request, in milliseconds. */
  timeoutMs?: number;
  /** Retries after a 429 or 5xx (openai). */
  retries?: number;
  /** openai: streamed answers (default true), or whole ones (--no-stream). */
  stream?: boolean;
  /** Where OPENAI_BASE_URL, OLLAMA_HOST and the key are read from. */
  environment?: NodeJS.ProcessEnv;
  /** The flag that named the model (--policy, --user, --model), for the fix when it is not served. */
  flag?: string;
}

export interface ChatModelProvider {
  /** The prefix of its specs: `ollama` in `ollama:qwen2.5:1.5b`. */
  readonly name: string;
  /** How a spec of it is written, with an example, for usage messages. */
  readonly example: string;
  /** The modes it can run a policy in; `native` always. */
  readonly modes: readonly ModelMode[];
  /** Why a policy of this provider cannot run in `mode`, when it cannot; `fix` names the flag to change. */
  modeRefusal?(spec: string, mode: ModelMode, fix: string): Error;
  /** Refuses a flag of this provider's when none of its models plays here. */
  refuseStrayFlags(options: ModelServerOptions): void;
  /** Refuses flags that cannot apply to the models of this provider that play (`models`, by name). */
  checkFlags?(models: readonly string[], options: ModelServerOptions): void;
  /** Checks the model now: the server answers, serves it, and something pins its weights. */
  check(model: string, options: ModelServerOptions & { timeoutMs: number; startupTimeoutMs: number }): Promise<ChatModel>;
}
