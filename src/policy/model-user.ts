// Owns the model-backed user simulator, written once against the ChatModel
// interface: a model plays the user who talks back. Its system prompt casts
// it as the user and gives it the brief (the goal, the first message it sent,
// every fact it means, the withheld ones to give only when asked) and a fixed
// end marker to say when it has nothing to add. It sees the conversation as a
// user would, role-swapped so that it writes the `assistant` side: the
// agent's words are its `user` turns, and tools, tool results and turns that
// only call tools are left out. It is asked without tools, and its seed,
// temperature and output-token cap are pinned in its actor.

import type { AssistantMessage, Message, UserMessage } from '../core/conversation.js';
import type { JsonObject } from '../core/json-value.js';
import type { Random } from '../core/random.js';
import type { UserFact } from '../core/user-facts.js';
import { drawSampling, type ChatModel, type Sampling } from '../models/chat-model.js';
import type { Actor } from './policy-contract.js';
import type { UserBrief, UserObservation, UserReply, UserSimulator } from './user-simulator.js';

/** What the user model says, alone, when the agent is done or it has nothing to add. */
export const USER_DONE_MARKER = '###DONE###';

export interface UserModelSettings {
  temperature: number;
  /** Output tokens per reply. */
  maxTokens: number;
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
export function userConversation(messages: readonly Message[]): (UserMessage | AssistantMessage)[] {
  const turns: (UserMessage | AssistantMessage)[] = [];
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

export class ModelUser implements UserSimulator {
  readonly actor: Actor & JsonObject;
  private readonly sampling: Sampling;
  private readonly prompt: string;

  constructor(
    private readonly model: ChatModel,
    settings: UserModelSettings,
    brief: UserBrief,
    /** The user's own substream: draws the model's sampling seed for this episode. */
    random: Random,
  ) {
    this.sampling = drawSampling(random, settings);
    this.actor = model.actor('user', { sampling: this.sampling, namesTransport: true });
    this.prompt = userSystemPrompt(brief);
  }

  async respond(observation: UserObservation, signal: AbortSignal): Promise<UserReply> {
    // No tools: the user can call none, and must not learn the agent's.
    const turn = await this.model.chat({ messages: [{ role: 'system', content: this.prompt }, ...userConversation(observation.messages)], sampling: this.sampling, signal });
    return readUserReply(turn.text);
  }
}
