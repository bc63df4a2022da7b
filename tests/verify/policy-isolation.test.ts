import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message, ToolDescriptor } from '../../src/core/conversation.js';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { policyFactoryFor } from '../../src/selection/scripted-policy-factory.js';
import { planEpisodes } from '../../src/lanes/episode-plan.js';
import { loadLane } from '../../src/lanes/lane-loader.js';
import type { Observation } from '../../src/policy/policy-contract.js';
import { produceEpisode, type PolicyFactory } from '../../src/verify/episode-production.js';
import { REPO_ROOT } from '../helpers.js';

describe('what a policy does to its observation', () => {
  it('never reaches the record, and each turn sees a fresh copy of the conversation and catalog as they are', async () => {
    const lane = loadLane('tool-world-v1', REPO_ROOT);
    // wrong_type_first reads the catalog after the first turn too; each task makes several turns.
    const specs = planEpisodes(lane, { from: 0, to: 3 }).slice(0, 12);
    const base = policyFactoryFor(lane);
    for (const spec of specs) {
      const clean = await produceEpisode(spec, base, { producedAt: '2026-12-01T00:00:00Z' });
      const seen: { messages: readonly Message[]; tools: readonly ToolDescriptor[] }[] = [];
      const vandal: PolicyFactory = (request) => {
        const inner = base(request);
        return {
          actor: inner.actor,
          async next(observation: Observation, signal: AbortSignal) {
            // Reads twice give the same copy; earlier turns' vandalism is not visible.
            assert.equal(observation.messages, observation.messages);
            assert.equal(observation.tools, observation.tools);
            assert.equal(observation.messages[0]!.content, lane.document.system_prompt);
            assert.ok(observation.tools.every((tool) => !tool.name.startsWith('vandalised')));
            for (const earlier of seen) {
              assert.notEqual(earlier.messages, observation.messages);
              assert.notEqual(earlier.tools[0], observation.tools[0]);
            }
            const action = await inner.next(observation, signal);
            seen.push({ messages: observation.messages, tools: observation.tools });
            for (const message of observation.messages as Message[]) message.content = 'vandalised';
            (observation.messages as Message[]).push({ role: 'user', content: 'vandalised' });
            for (const tool of observation.tools as ToolDescriptor[]) {
              tool.name = `vandalised-${tool.name}`;
              tool.input_schema.properties = {};
            }
            (observation.tools as ToolDescriptor[]).splice(0, 1);
            return action;
          },
        };
      };
      const vandalised = await produceEpisode(spec, vandal, { producedAt: '2026-12-01T00:00:00Z' });
      assert.ok(seen.length >= 2, `${spec.task.id}: ${seen.length} turns`);
      assert.equal(canonicalJson(vandalised), canonicalJson(clean), spec.task.id);
    }
  });
});
