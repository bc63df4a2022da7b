// Owns the model-backed user simulator: a local model served by Ollama plays
// the user who talks back. Its system prompt casts it as the user and gives it
// the brief (the goal, the first message it sent, every fact it means, the
// withheld ones to give only when asked) and a fixed end marker to say when it
// has nothing to add. It sees the conversation as a user would, role-swapped
// so that it writes the `assistant` side: the agent's words are its `user`
// turns, and tools, tool results and turns that only call tools are left out.
// It is asked through /api/chat without tools, with the same per-turn
// requests, silence limit and InfrastructureError as the model policy, and
// its seed, temperature and output-token cap are pinned in its actor.

import type { Ollama, Message as OllamaMessage } from 'ollama';
import type { Message } from '../../core/conversation.js';
import type { JsonObject } from '../../core/json-value.js';
import type { Random } from '../../core/random.js';
import type { UserFact } from '../../core/user-facts.js';
import type { Actor } from '../policy-contract.js';
import type { UserBrief, UserObservation, UserReply, UserSimulator } from '../user-simulator.js';
import { modelActor, samplingOptions, type SamplingOptions } from './model-actor.js';
import { DEFAULT_MODEL_TIMEOUT_MS } from './model-server-fetch.js';
import { runModelTurn } from './model-turn.js';
import type { ModelInfo } from './ollama-model.js';

/** What the user model says, alone, when the agent is done or it has nothing to add. */
export const USER_DONE_MARKER = '###DONE###';

export interface UserModelSettings {
  temperature: number;
  /** Output tokens per reply (Ollama's num_predict). */
  num_predict: number;
}

export interface OllamaUserOptions {
  info: ModelInfo;
  settings: UserModelSettings;
  /** What this episode's user knows. */
  brief: UserBrief;
  /** The user's own substream: draws the model's sampling seed for this episode. */
  random: Random;
  /** How long the server may stay silent on one request, in milliseconds; never part of the record. */
  timeoutMs?: number;
}

function factLine(fact: UserFact): string {
  return fact.asked_by.length ? `- ${fact.answer} (asked for by: ${fact.asked_by.join(', ')})` : `- ${fact.answer}`;
}

/** The system prompt that casts the model as the user with this brief. */
export function userSystemPrompt(brief: UserBrief): string {
  const told = brief.facts.filter((fact) => !fact.withheld);
  const withheld = brief.facts.filter((fact) => fact.withheld);
  const known = brief.facts.length
    ? [
        'What you know (nothing else; never make up details):',
        ...(told.length ? ['Already told in your first message:', ...told.map(factLine)] : []),
        ...(withheld.length ? ['Not told yet; give one only when the assistant asks for it:', ...withheld.map(factLine)] : []),
      ]
    : ['You know only what your first message says; never make up details.'];
  return [
    'You are role-playing the user in a conversation with an AI assistant. You are the user, not the assistant: the assistant is working on your request, and you only answer it.',
    '',
    `Your goal: ${brief.goal}`,
    '',
    'The first message you sent the assistant was:',
    brief.opening,
    '',
    ...known,
    '',
    'How to reply:',
    '- Write only your next message to the assistant, in a sentence or two, as this user would.',
    '- Answer what the assistant asks from what you know above, giving names, numbers and codes exactly as written there. If it asks for something you do not know, say that you do not know.',
    '- Do not do the assistant\'s work, and do not repeat your request unless asked.',
    `- When the assistant has done what you asked, or you have nothing to add, reply with exactly ${USER_DONE_MARKER} and nothing else.`,
  ].join('\n');
}

/**
 * The conversation as the user saw it, from the user's side: its own turns
 * are `assistant` (what the model writes), the agent's words are `user`.
 * The agent's system prompt, tool results, turns that only call tools and the
 * raw text of malformed calls are not words to the user. Turns that meet
 * after those are left out are joined, since some families' templates expect
 * the two roles to alternate.
 */
export function userConversation(messages: readonly Message[]): OllamaMessage[] {
  const turns: OllamaMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'tool') continue;
    if (message.role === 'assistant' && message.malformed_tool_call) continue;
    const content = message.content.trim();
    if (content === '') continue;
    const role = message.role === 'user' ? 'assistant' : 'user';
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content += `\n\n${content}`;
    else turns.push({ role, content });
  }
  return turns;
}

/** The reply the model's text makes: the words before the marker, or done when there are none. */
export function readUserReply(text: string): UserReply {
  // Words after the marker are the model running on past its own end; a reply
  // before it is kept, and the runner asks again next time.
  const at = text.indexOf(USER_DONE_MARKER);
  const said = (at < 0 ? text : text.slice(0, at)).trim();
  // A marker a model dressed in quotes or bold leaves no words: still done.
  return /[\p{L}\p{N}]/u.test(said) ? { kind: 'reply', text: said } : { kind: 'done' };
}

export class OllamaUser implements UserSimulator {
  readonly actor: Actor & JsonObject;
  private readonly options: SamplingOptions;
  private readonly timeoutMs: number;
  private readonly prompt: string;

  constructor(private readonly config: OllamaUserOptions) {
    this.timeoutMs = config.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
    this.options = samplingOptions(config.random, config.settings);
    this.actor = modelActor('user', config.info, { options: { ...this.options } });
    this.prompt = userSystemPrompt(config.brief);
  }

  async respond(observation: UserObservation, signal: AbortSignal): Promise<UserReply> {
    const text = await runModelTurn({ host: this.config.info.host, endpoint: '/api/chat', timeoutMs: this.timeoutMs, signal }, (client) => this.chat(client, observation));
    return readUserReply(text);
  }

  private async chat(client: Ollama, observation: UserObservation): Promise<string> {
    // No tools: the user can call none, and must not learn the agent's.
    const stream = await client.chat({
      model: this.config.info.model,
      messages: [{ role: 'system', content: this.prompt }, ...userConversation(observation.messages)],
      options: { ...this.options },
      stream: true,
    });
    let text = '';
    for await (const part of stream) text += part.message?.content ?? '';
    return text;
  }
}

/** The user simulator for one episode: `info` from inspectModel, `random` the episode's user substream. */
export function createOllamaUser(info: ModelInfo, settings: UserModelSettings, random: Random, brief: UserBrief, options: { timeoutMs?: number } = {}): OllamaUser {
  return new OllamaUser({ info, settings, random, brief, timeoutMs: options.timeoutMs });
}
