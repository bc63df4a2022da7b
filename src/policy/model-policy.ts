// Owns the model policy, written once against the ChatModel interface: each
// turn asks the model with the episode's conversation and tools, and one turn
// becomes exactly one action. Calls the server parsed natively (several in a
// turn make one tool_calls action) are taken as they came; when it parsed
// none, the family codec reads the text, since a small model may write its
// call as text the server's parser missed (and in raw mode the codec reads
// every turn). The seed, temperature and output-token cap of every turn come
// from the lane and the episode, and are pinned in the record's actor. A
// failure of the server rather than of the model leaves the model as an
// InfrastructureError, never as an action.

import type { JsonObject } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import { drawSampling, type ChatModel, type ModelMode, type Sampling } from '../models/chat-model.js';
import type { ModelCodec } from '../models/codecs/model-codec.js';
import { callsAction } from '../models/model-action.js';
import type { Action, Actor, Observation, Policy } from './policy-contract.js';

export interface ModelSettings {
  mode: ModelMode;
  codec: ModelCodec;
  temperature: number;
  /** Output tokens per turn. */
  maxTokens: number;
}

interface ModelPolicyOptions {
  /** The checked model, as it runs in `settings.mode` (ChatModel.inMode). */
  model: ChatModel;
  settings: ModelSettings;
  /** The policy's own substream: draws the model's sampling seed for this episode. */
  random: Random;
}

export class ModelPolicy implements Policy {
  readonly actor: Actor & JsonObject;
  private readonly sampling: Sampling;

  constructor(private readonly config: ModelPolicyOptions) {
    const { settings } = config;
    this.sampling = drawSampling(config.random, settings);
    this.actor = config.model.actor('policy', { codec: settings.codec.name, mode: settings.mode, sampling: this.sampling, namesTransport: true });
  }

  async next(observation: Observation, signal: AbortSignal): Promise<Action> {
    const turn = await this.config.model.chat({ messages: observation.messages, tools: observation.tools, sampling: this.sampling, signal });
    if (turn.toolCalls.length > 0) return callsAction(turn.toolCalls, turn.text.trim());
    // Whatever the model wrote is its behaviour: text the codec cannot read becomes a MalformedToolCall, never a failure.
    return this.config.settings.codec.parse(turn.raw ?? turn.text);
  }
}
