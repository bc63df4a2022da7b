import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message, ToolDescriptor } from '../../src/core/conversation.js';
import { substream } from '../../src/core/random.js';
import { corruptArguments, numberToWords } from '../../src/policy/argument-corruption.js';
import type { Action } from '../../src/policy/policy-contract.js';
import { ScriptedPolicy } from '../../src/policy/scripted-policy.js';
import type { ScriptStep } from '../../src/solutions/solution-script.js';

const searchTool: ToolDescriptor = {
  name: 'search_issues',
  description: 'search',
  input_schema: {
    type: 'object',
    required: ['query', 'limit'],
    properties: { query: { type: 'string' }, limit: { type: 'integer' }, state: { type: 'string' } },
  },
};

const script: ScriptStep[] = [
  { call: 'search_issues', arguments: { query: 'login', limit: 20 }, as: 'found' },
  { answer: 'Found {{found.issues.*.number}} ({{found.total}} in all).' },
];

const signal = new AbortController().signal;

function toolMessage(id: string, content: string, ok = true): Message {
  return { role: 'tool', tool_call_id: id, name: 'search_issues', content, tool_result: ok ? { ok } : { ok, kind: 'invalid_arguments', error: content } };
}

async function step(policy: ScriptedPolicy, messages: Message[]): Promise<Action> {
  return policy.next({ messages, tools: [searchTool] }, signal);
}

describe('scripted policy', () => {
  it('plays the script, filling templates from the results it was shown', async () => {
    const policy = new ScriptedPolicy({ script, variant: 'clean', random: substream(1, 'policy') });
    const messages: Message[] = [{ role: 'user', content: 'find login bugs' }];
    assert.deepEqual(await step(policy, messages), { kind: 'tool_call', name: 'search_issues', arguments: { query: 'login', limit: 20 } });
    messages.push(toolMessage('call_1', '{"issues":[{"number":4821},{"number":5120}],"total":2}'));
    assert.deepEqual(await step(policy, messages), { kind: 'final_text', text: 'Found 4821, 5120 (2 in all).' });
    assert.equal(policy.actor.variant, 'clean');
  });

  it('takes a plain-text answer as the result, but text that starts like JSON and does not parse as cut short', async () => {
    const plainScript: ScriptStep[] = [{ call: 'search_issues', arguments: { query: 'login', limit: 20 }, as: 'said' }, { answer: 'The server said: {{said.text}}' }];
    const plain = new ScriptedPolicy({ script: plainScript, variant: 'clean', random: substream(1, 'policy') });
    const messages: Message[] = [{ role: 'user', content: 'find login bugs' }];
    await step(plain, messages);
    // A real server's write answer, e.g. server-memory's delete_entities.
    messages.push(toolMessage('call_1', 'Entities deleted successfully'));
    assert.deepEqual(await step(plain, messages), { kind: 'final_text', text: 'The server said: Entities deleted successfully' });
    const cut = new ScriptedPolicy({ script, variant: 'clean', random: substream(1, 'policy') });
    const again: Message[] = [{ role: 'user', content: 'find login bugs' }];
    await step(cut, again);
    again.push(toolMessage('call_1', '{"issues":[{"numb'));
    assert.match((await step(cut, again) as { text: string }).text, /could not finish the task: search_issues failed \(the result could not be read; it looks cut short\)/);
  });

  it('in wrong_type_first, makes one mistake, reads the error, and repairs it', async () => {
    const policy = new ScriptedPolicy({ script, variant: 'wrong_type_first', random: substream(1, 'policy') });
    const messages: Message[] = [{ role: 'user', content: 'find login bugs' }];
    const first = (await step(policy, messages)) as Action & { kind: 'tool_call' };
    assert.equal(first.kind, 'tool_call');
    assert.notDeepEqual(first.arguments, { query: 'login', limit: 20 });
    messages.push(toolMessage('call_1', 'limit: expected integer, got string', false));
    assert.deepEqual(await step(policy, messages), { kind: 'tool_call', name: 'search_issues', arguments: { query: 'login', limit: 20 } });
    messages.push(toolMessage('call_2', '{"issues":[{"number":7}],"total":1}'));
    assert.deepEqual(await step(policy, messages), { kind: 'final_text', text: 'Found 7 (1 in all).' });
  });

  it('gives up with an honest answer when a call fails for a reason it did not cause', async () => {
    const policy = new ScriptedPolicy({ script, variant: 'clean', random: substream(1, 'policy') });
    const messages: Message[] = [{ role: 'user', content: 'find login bugs' }];
    await step(policy, messages);
    messages.push(toolMessage('call_1', 'rate limited, retry after 2s', false));
    const answer = await step(policy, messages);
    assert.equal(answer.kind, 'final_text');
    assert.match((answer as { text: string }).text, /could not finish.*search_issues failed \(rate limited, retry after 2s\)/);
  });
});

describe('argument corruption', () => {
  it('spells small integers as words, like "limit": "ten"', () => {
    assert.equal(numberToWords(10), 'ten');
    assert.equal(numberToWords(20), 'twenty');
    assert.equal(numberToWords(42), 'forty-two');
    assert.equal(numberToWords(100), 'one hundred');
    assert.equal(numberToWords(4821), undefined);
  });

  it('only corrupts fields the call has, by wrong type or a missing required field, as the schema allows', () => {
    const kinds = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const corruption = corruptArguments(searchTool, { query: 'login', limit: 20, state: 'open' }, substream(seed, 'policy'))!;
      kinds.add(`${corruption.kind}:${corruption.field}`);
      if (corruption.kind === 'wrong_type') assert.equal(corruption.arguments[corruption.field], 'twenty');
      else assert.ok(!(corruption.field in corruption.arguments));
    }
    assert.deepEqual([...kinds].sort(), ['missing_required:limit', 'missing_required:query', 'wrong_type:limit']);
    assert.equal(corruptArguments(searchTool, { state: 'open' }, substream(1, 'x')), undefined);
  });
});
