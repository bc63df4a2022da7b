// Owns the model-backed user simulator over an OpenAI-compatible server: the
// same brief, role-swapped conversation, end marker and reading of the reply
// as the Ollama user (ollama-user.ts owns those), asked as one chat
// completion without tools. Its seed, temperature and output-token cap are
// pinned in its actor.

import type { JsonObject } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import { readUserReply, userConversation, userSystemPrompt } from '../ollama/ollama-user.js';
import type { Actor } from '../policy-contract.js';
import type { UserBrief, UserObservation, UserReply, UserSimulator } from '../user-simulator.js';
import { openAIActor, openAISampling, type OpenAIModel, type OpenAISampling } from './openai-actor.js';
import { chatCompletion, type OpenAIMessage } from './openai-chat.js';
import type { OpenAIConnection } from './openai-policy.js';

export interface OpenAIUserSettings {
  temperature: number;
  max_tokens: number;
  stream: boolean;
}

export class OpenAIUser implements UserSimulator {
  readonly actor: Actor & JsonObject;
  private readonly sampling: OpenAISampling;
  private readonly prompt: string;

  constructor(
    private readonly model: OpenAIModel,
    private readonly settings: OpenAIUserSettings,
    private readonly connection: OpenAIConnection,
    brief: UserBrief,
    random: Random,
  ) {
    this.sampling = openAISampling(random, settings);
    this.actor = openAIActor('user', model, { stream: settings.stream, options: { ...this.sampling } });
    this.prompt = userSystemPrompt(brief);
  }

  async respond(observation: UserObservation, signal: AbortSignal): Promise<UserReply> {
    // No tools: the user can call none, and must not learn the agent's.
    const messages: OpenAIMessage[] = [{ role: 'system', content: this.prompt }, ...userConversation(observation.messages).map((turn) => ({ role: turn.role as 'user' | 'assistant', content: turn.content }))];
    const answer = await chatCompletion(
      this.connection.server,
      { model: this.model.info.model, messages, ...this.sampling, stream: this.settings.stream },
      { timeoutMs: this.connection.timeoutMs, signal, ...(this.connection.retries !== undefined ? { retries: this.connection.retries } : {}) },
    );
    return readUserReply(answer.text);
  }
}
