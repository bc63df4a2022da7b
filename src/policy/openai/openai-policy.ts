// Owns the model policy over an OpenAI-compatible server: each turn is one
// chat completion with the episode's tools, streamed by default. Native
// tool_calls (several per turn make one tool_calls action) are read as the
// server sent them; when the server's parser found none, the text goes through
// the family codec, since a server started without a tool parser returns the
// model's calls as text. Whatever the model wrote is its behaviour; a failure
// of the server leaves openai-chat.ts as an InfrastructureError. The seed,
// temperature and output-token cap of every turn are pinned in the actor.

import type { JsonObject } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import { callsAction, type ModelCodec } from '../codecs/model-codec.js';
import type { Action, Actor, Observation, Policy } from '../policy-contract.js';
import { openAIActor, openAISampling, type OpenAIModel, type OpenAISampling } from './openai-actor.js';
import { chatCompletion, type OpenAIServer } from './openai-chat.js';
import { parsedArguments, toOpenAIMessages, toOpenAITool } from './openai-messages.js';

export interface OpenAIModelSettings {
  codec: ModelCodec;
  temperature: number;
  max_tokens: number;
  /** Streamed answers (SSE) or one JSON body per turn. */
  stream: boolean;
}

/** How a turn's requests are made: never part of the record. */
export interface OpenAIConnection {
  server: OpenAIServer;
  /** How long the server may stay silent on one request, in milliseconds. */
  timeoutMs: number;
  /** Retries after a 429 or a 5xx. */
  retries?: number;
}

export interface OpenAIPolicyOptions {
  model: OpenAIModel;
  settings: OpenAIModelSettings;
  connection: OpenAIConnection;
  /** The policy's own substream: draws the model's sampling seed for this episode. */
  random: Random;
}

export class OpenAIPolicy implements Policy {
  readonly actor: Actor & JsonObject;
  private readonly sampling: OpenAISampling;

  constructor(private readonly config: OpenAIPolicyOptions) {
    const { settings } = config;
    this.sampling = openAISampling(config.random, settings);
    this.actor = openAIActor('policy', config.model, { codec: settings.codec.name, mode: 'native', stream: settings.stream, options: { ...this.sampling } });
  }

  async next(observation: Observation, signal: AbortSignal): Promise<Action> {
    const { model, settings, connection } = this.config;
    const answer = await chatCompletion(
      connection.server,
      {
        model: model.info.model,
        messages: toOpenAIMessages(observation.messages),
        tools: observation.tools.map(toOpenAITool),
        ...this.sampling,
        stream: settings.stream,
      },
      { timeoutMs: connection.timeoutMs, signal, ...(connection.retries !== undefined ? { retries: connection.retries } : {}) },
    );
    if (answer.toolCalls.length > 0) return callsAction(answer.toolCalls.map((call) => ({ name: call.name, arguments: parsedArguments(call.arguments) })), answer.text.trim());
    // No parsed call: the family may still have written one as text.
    return settings.codec.parse(answer.text);
  }
}
