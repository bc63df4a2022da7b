// Owns the scripted user simulator: the task's user, played from its facts.
// It answers a question that asks for a fact with the fact's answer (adding
// that it said so already when the fact was told before), says it does not
// know when a question asks for nothing it knows, and when the agent stops
// without a question while a withheld fact was never given (it acted on a
// guess), it corrects the agent with that fact. Otherwise it is done. It
// keeps no state of its own: every reply follows from the conversation, so a
// replay derives the same replies.

import { asksFor, isQuestion, tellsFact, type UserFact } from '../core/user-facts.js';
import type { UserBrief, UserObservation, UserReply, UserSimulator } from './user-simulator.js';

export const DO_NOT_KNOW = "I don't know, sorry.";
export const ALREADY_SAID = 'As I said:';
export const CORRECTION = "That isn't what I meant.";

export class ScriptedUser implements UserSimulator {
  readonly actor = { role: 'user', kind: 'scripted', name: 'scripted-user', version: '1' };

  constructor(private readonly brief: UserBrief) {}

  async respond(observation: UserObservation, _signal?: AbortSignal): Promise<UserReply> {
    const { messages } = observation;
    const last = messages[messages.length - 1];
    if (last?.role !== 'assistant') return { kind: 'done' };
    const told = (fact: UserFact) => messages.some((message) => message.role === 'user' && tellsFact(message.content, fact));
    if (isQuestion(last.content)) {
      const asked = this.brief.facts.filter((fact) => asksFor(last.content, fact));
      if (asked.length === 0) return { kind: 'reply', text: DO_NOT_KNOW };
      return { kind: 'reply', text: asked.map((fact) => (told(fact) ? `${ALREADY_SAID} ${fact.answer}` : fact.answer)).join(' ') };
    }
    const missing = this.brief.facts.filter((fact) => fact.withheld && !told(fact));
    if (missing.length > 0) return { kind: 'reply', text: [CORRECTION, ...missing.map((fact) => fact.answer)].join(' ') };
    return { kind: 'done' };
  }
}
