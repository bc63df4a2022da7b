import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../src/core/conversation.js';
import { asksFor } from '../../src/core/user-facts.js';
import { ScriptedUser } from '../../src/policy/scripted-user.js';

const facts = [
  { id: 'issue', value: '#7429', withheld: true, asked_by: ['which issue', 'issue number'], answer: "It's issue #7429.", question: 'Which issue should I close?' },
  { id: 'reason', value: 'as completed', withheld: false, asked_by: ['reason'], answer: 'Close it as completed.', question: 'What reason?' },
];
const brief = { goal: 'Close #7429 as completed.', opening: 'Please close the fixed issue as completed.', facts };
const opening: Message[] = [
  { role: 'system', content: 'You manage issues.' },
  { role: 'user', content: brief.opening },
];
const agent = (content: string): Message => ({ role: 'assistant', content });
const respond = (messages: Message[]) => new ScriptedUser(brief).respond({ messages }, new AbortController().signal);

describe('scripted user simulator', () => {
  it('answers a question that asks for a withheld fact with the fact', async () => {
    assert.deepEqual(await respond([...opening, agent('Which issue should I close?')]), { kind: 'reply', text: "It's issue #7429." });
    assert.deepEqual(await respond([...opening, agent('What is the ISSUE NUMBER?')]), { kind: 'reply', text: "It's issue #7429." });
  });

  it('says it already said so when asked for a fact it told', async () => {
    assert.deepEqual(await respond([...opening, agent('What reason should I give?')]), { kind: 'reply', text: 'As I said: Close it as completed.' });
    const askedTwice = [...opening, agent('Which issue?'), { role: 'user', content: "It's issue #7429." } as Message, agent('Which issue, again?')];
    assert.deepEqual(await respond(askedTwice), { kind: 'reply', text: "As I said: It's issue #7429." });
  });

  it("says it doesn't know when a question asks for nothing it knows", async () => {
    assert.deepEqual(await respond([...opening, agent('Should I also notify the team?')]), { kind: 'reply', text: "I don't know, sorry." });
  });

  it('corrects an agent that stopped without asking for a withheld fact, once, then is done', async () => {
    const guessed = [...opening, agent('I closed #6094 as completed.')];
    const correction = await respond(guessed);
    assert.deepEqual(correction, { kind: 'reply', text: "That isn't what I meant. It's issue #7429." });
    assert.deepEqual(await respond([...guessed, { role: 'user', content: (correction as { text: string }).text }, agent('Closed #7429.')]), { kind: 'done' });
  });

  it('is done when every withheld fact was given and the agent does not ask', async () => {
    assert.deepEqual(await respond([...opening, agent('Which issue?'), { role: 'user', content: "It's issue #7429." }, agent('Closed #7429 as completed.')]), { kind: 'done' });
  });

  it('keeps no state: the same conversation gives the same reply from a fresh or a used simulator', async () => {
    const user = new ScriptedUser(brief);
    const conversation = [...opening, agent('Which issue should I close?')];
    const first = await user.respond({ messages: conversation }, new AbortController().signal);
    await user.respond({ messages: [...opening, agent('Done.')] }, new AbortController().signal);
    assert.deepEqual(await user.respond({ messages: conversation }, new AbortController().signal), first);
  });

  it('matches the words of a question as whole words', () => {
    assert.equal(asksFor('Which issues are open?', facts[0]!), false);
    assert.equal(asksFor('Ok, which issue?', facts[0]!), true);
    assert.equal(asksFor('Is there a treason?', facts[1]!), false);
  });
});
