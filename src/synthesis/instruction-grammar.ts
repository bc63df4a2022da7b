// Owns the wording of a synthesised task: a phrasing grammar built from its
// golden actions (the verb a tool's name gives, the record it acts on and
// every value it is given), in the lanes' own grammar language, so each
// episode draws one of several phrasings and phrasing soundness proves every
// one states the values the solution needs.

import type { PhrasingRules } from '../lanes/lane.js';
import type { FilledCall, Mention } from './argument-filling.js';
import { singular, words } from './state-survey.js';

/** The greetings and closings a synthesised lane shares across its tasks. */
export const SHARED_PHRASING: PhrasingRules = {
  greet: ['Hi! ', 'Hello! ', 'Hey, quick one. ', 'Good morning! '],
  thanks: [' Thanks!', ' Thank you.', ' Thanks a lot.'],
};

/** "create_entities" → "create entities"; a verb a person would say for the tool. */
export function toolPhrase(tool: string): string {
  return words(tool);
}

function mentionText(mentions: readonly Mention[]): string {
  const parts = mentions.map((mention) => `${mention.property} ${quote(mention.text)}`);
  if (parts.length === 0) return '';
  if (parts.length === 1) return parts[0]!;
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

function quote(text: string): string {
  return /\s/.test(text) || text.includes('{{') ? `"${text}"` : text;
}

/** A grammar for a task that changes the world: do each call, stating every value. */
export function actionGrammar(calls: readonly FilledCall[]): PhrasingRules {
  const steps = calls.map((call) => {
    const values = mentionText(call.mentions);
    return values ? `${toolPhrase(call.call)} with ${values}` : toolPhrase(call.call);
  });
  const job = steps.length === 1 ? steps[0]! : `${steps.slice(0, -1).join(', then ')}, and then ${steps[steps.length - 1]}`;
  return {
    say: ['<greet?>Please <job>.<thanks?>', '<greet?>I need you to <job>.<thanks?>', '<greet?>Could you <job>?<thanks?>', '<greet?><^job>, please.<thanks?>'],
    job: [job],
  };
}

/** A grammar for a question about one record: "What is the city of the person {{target.name}}?" */
export function questionGrammar(field: string, noun: string, identity: Mention): PhrasingRules {
  const thing = `the ${singular(noun)} with ${identity.property} ${quote(identity.text)}`;
  const asked = words(field);
  return {
    say: [
      `<greet?>What is the ${asked} of ${thing}?<thanks?>`,
      `<greet?>Look up ${thing} and tell me its ${asked}.<thanks?>`,
      `<greet?>Can you find the ${asked} of ${thing}?<thanks?>`,
      `<greet?>I need the ${asked} of ${thing}.<thanks?>`,
    ],
  };
}
