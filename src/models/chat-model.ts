// Owns the one chat-model interface every provider implements: a request
// in record-shaped messages and tool descriptors with the turn's sampling and
// the episode's signal, a turn out (text, tool calls with their arguments,
// usage, and the raw text where a codec reads it), the model's pin and how a
// record names it. A failure of what the model runs on (an HTTP error, a
// silence, a dropped connection, a body that is not the protocol) is an
// InfrastructureError, never a turn: the model policy, the model user and the
// writer reach a model through this interface alone.

import type { Message, ToolDescriptor } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import type { ModelCodec } from './codecs/model-codec.js';
import type { ToolCallRequest } from './model-action.js';

/** How long a model server may stay silent on one chat request (before answering, or between two streamed frames). */
export const DEFAULT_MODEL_TIMEOUT_MS = 20_000;

/**
 * The longest a start-up check (is it the server, is the model there) waits
 * on one request: servers answer their listings from memory in milliseconds,
 * so a host silent this long is not a working one.
 */
export const STARTUP_CHECK_TIMEOUT_MS = 10_000;

/** Native: the server applies the chat template and parses calls; raw: the factory renders the prompt with the family codec. */
export type ModelMode = 'native' | 'raw';

/** Who acted, pinned into every record's provenance. */
export interface Actor {
  role: string;
  kind: string;
  name: string;
  version: string;
  [detail: string]: unknown;
}

/**
 * What it runs on failed: a model server answered with an HTTP error,
 * dropped the connection, stayed silent past its timeout, or sent something
 * that is not its protocol. That is not the agent's behaviour, so it never
 * becomes a record: the runner stops the episode and the factory keeps it
 * apart from the training records. A model that answers well-formed HTTP with
 * unusable text is behaviour (a MalformedToolCall), not this.
 */
export class InfrastructureError extends Error {
  override readonly name = 'InfrastructureError';
}

/** The sampling of every request an actor makes in one episode. */
export interface Sampling {
  seed: number;
  temperature: number;
  /** Output tokens per turn (Ollama's num_predict, OpenAI's max_tokens). */
  maxTokens: number;
}

/** The sampling of one actor for one episode: its seed drawn from the actor's own substream. */
export function drawSampling(random: Random, settings: { temperature: number; maxTokens: number }): Sampling {
  return { seed: random.int(0, 2 ** 31 - 1), temperature: settings.temperature, maxTokens: settings.maxTokens };
}

export interface ChatRequest {
  /** The conversation in the record's shape; the provider translates it. */
  messages: readonly Message[];
  /** The tools the model may call; omitted for a part that calls none (the user, the writer). */
  tools?: readonly ToolDescriptor[];
  sampling: Sampling;
  /** The episode's signal: aborted when its wall time runs out; its reason is rethrown as is. */
  signal: AbortSignal;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ChatTurn {
  /** What the model wrote as words ('' when none). */
  text: string;
  /** Calls the server parsed natively, in order, arguments read leniently (a string that is not JSON stays a string). */
  toolCalls: ToolCallRequest[];
  usage: ChatUsage | null;
  /** The text the model generated, when the factory rendered the prompt with a codec (raw mode): the codec reads the turn from it. */
  raw?: string;
}

/** How an actor of this model is run, for the record: the policy names its codec and mode, and every actor its sampling. */
export interface ActorDetails {
  codec?: string;
  mode?: ModelMode;
  sampling: Sampling;
  /** Whether the actor names how answers came (streamed or whole), for the providers that can do either; the writer's never has. */
  namesTransport?: boolean;
}

/** Who the model is in an actor: its name, the short and the full pin, and the provider that serves it. */
interface ModelIdentity {
  name: string;
  version: string;
  provider: string;
  digest: string | null;
}

/**
 * A model's actor, its keys in the order records have always written them:
 * who it is, what its server says of the weights, how it was run (codec,
 * mode, what the provider adds, its sampling `options` in the provider's own
 * names), and last the server's version.
 */
export function modelActor(role: string, identity: ModelIdentity, weights: JsonObject, details: ActorDetails, run: { transport?: JsonObject; options: JsonObject }, server: JsonObject): Actor & JsonObject {
  return {
    role,
    kind: 'model',
    name: identity.name,
    version: identity.version,
    provider: identity.provider,
    digest: identity.digest,
    ...weights,
    ...(details.codec !== undefined ? { codec: details.codec } : {}),
    ...(details.mode !== undefined ? { mode: details.mode } : {}),
    ...run.transport,
    options: run.options,
    ...server,
  };
}

export interface ChatModel {
  /** `<provider>:<model>`, with the model as its server names it (`qwen` asked for may be `qwen:latest` served). */
  readonly spec: string;
  /** The model family, as far as the server tells (for the codec); null when it does not. */
  readonly family: string | null;
  /** What pins the weights in a run's identity: a digest, or the revision the weights name. */
  readonly pin: string;
  /** The actor a record names for this model in `role`; keys in the order records have always had. */
  actor(role: string, details: ActorDetails): Actor & JsonObject;
  /** The model as the start of a run names it on stderr: name, short pin, what and where the server is. */
  describe(): string;
  /** What to check when the server fails mid-run. */
  failureHint(): string;
  /** The modes its provider can run a policy in (native first). */
  readonly modes: readonly ModelMode[];
  /** The model as a policy runs it in `mode` (raw renders with `codec`); a mode the provider does not list is a caller's bug, and throws. */
  inMode(mode: ModelMode, codec: ModelCodec): ChatModel;
  chat(request: ChatRequest): Promise<ChatTurn>;
}
