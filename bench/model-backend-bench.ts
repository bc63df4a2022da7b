// Owns the model-backend figures of `npm run bench`: what one model turn
// costs the factory's client, against local fake servers that answer from
// scripted agents at once (tests/fixtures/fake-openai.ts and fake-ollama.ts,
// the same wire protocols as vLLM / llama.cpp and Ollama). The floor is a
// bare HTTP round trip of the same request, answered whole, read as text and
// not parsed; the policy's turn over it is the backend's overhead: building
// the request from the conversation, streaming (SSE chunks with split
// tool-call arguments) or parsing the whole answer, reassembling the calls
// and making them an action. Every figure is the median of many turns in one
// run, interleaved. Also runnable alone: `node --import tsx bench/model-backend-bench.ts`.

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Message, ToolDescriptor } from '../src/core/conversation.js';
import { substream } from '../src/core/random.js';
import { checkModel } from '../src/models/model-registry.js';
import { codecByName } from '../src/models/codecs/codec-registry.js';
import { ModelPolicy } from '../src/policy/model-policy.js';
import type { Observation, Policy } from '../src/policy/policy-contract.js';
import { startFakeOllama } from '../tests/fixtures/fake-ollama.js';
import { startFakeOpenAI } from '../tests/fixtures/fake-openai.js';
import { toOpenAIMessages, toOpenAITool } from '../src/models/message-translation.js';

export interface ModelBackendFigures {
  turns: number;
  /** Median milliseconds per turn. */
  floor_ms: number;
  openai_streamed_ms: number;
  openai_whole_ms: number;
  ollama_streamed_ms: number;
  /** Policy turn minus the floor. */
  openai_streamed_overhead_ms: number;
  openai_whole_overhead_ms: number;
}

const REVISION = '0123456789abcdef0123456789abcdef01234567';

/** The first turn of tool-world-v1's first committed record: the system prompt, the request and nine tools. */
function firstTurn(): Observation {
  const line = readFileSync(new URL('../datasets/tool-world-v1/episodes.jsonl', import.meta.url), 'utf8').split('\n', 1)[0]!;
  const record = JSON.parse(line) as { tools: { name: string; description: string; input_schema: string }[]; messages: Message[] };
  const tools: ToolDescriptor[] = record.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: JSON.parse(tool.input_schema) }));
  return { messages: record.messages.slice(0, 2), tools };
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Median milliseconds per turn of each contender, measured interleaved (one
 * turn of each in turn, the order rotating) after a warm-up, so that JIT
 * warm-up and machine noise fall on all of them alike.
 */
async function timeInterleaved(turns: number, contenders: readonly (() => Promise<unknown>)[]): Promise<number[]> {
  for (let warm = 0; warm < 50; warm++) for (const turn of contenders) await turn();
  const times = contenders.map((): number[] => []);
  for (let index = 0; index < turns; index++) {
    for (let offset = 0; offset < contenders.length; offset++) {
      const which = (index + offset) % contenders.length;
      const started = performance.now();
      await contenders[which]!();
      times[which]!.push(performance.now() - started);
    }
  }
  return times.map(median);
}

export async function measureModelBackends(turns = 300): Promise<ModelBackendFigures> {
  const observation = firstTurn();
  const signal = new AbortController().signal;
  const openai = await startFakeOpenAI({ flavour: 'vllm', weights: { 'fake-qwen:1b': `/models/snapshots/${REVISION}` } });
  const ollama = await startFakeOllama();
  try {
    const codec = codecByName('hermes');
    const settings = { mode: 'native' as const, codec, temperature: 0.2, maxTokens: 512 };
    const openAIPolicy = async (stream: boolean): Promise<Policy> =>
      new ModelPolicy({ model: await checkModel({ provider: 'openai', model: 'fake-qwen:1b' }, { baseUrl: openai.baseUrl, stream }), settings, random: substream(0, 'bench') });
    const streamed = await openAIPolicy(true);
    const whole = await openAIPolicy(false);
    const ollamaPolicy = new ModelPolicy({ model: await checkModel({ provider: 'ollama', model: 'fake-qwen:1b' }, { host: ollama.url }), settings, random: substream(0, 'bench') });
    const body = JSON.stringify({
      model: 'fake-qwen:1b',
      messages: toOpenAIMessages(observation.messages),
      tools: observation.tools.map(toOpenAITool),
      tool_choice: 'auto',
      seed: 1,
      temperature: 0.2,
      max_tokens: 512,
      stream: false,
    });
    const floorTurn = async () => {
      const response = await fetch(`${openai.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await response.text();
    };
    const [floor, openaiStreamed, openaiWhole, ollamaStreamed] = (await timeInterleaved(turns, [
      floorTurn,
      () => streamed.next(observation, signal),
      () => whole.next(observation, signal),
      () => ollamaPolicy.next(observation, signal),
    ])) as [number, number, number, number];
    return {
      turns,
      floor_ms: floor,
      openai_streamed_ms: openaiStreamed,
      openai_whole_ms: openaiWhole,
      ollama_streamed_ms: ollamaStreamed,
      openai_streamed_overhead_ms: openaiStreamed - floor,
      openai_whole_overhead_ms: openaiWhole - floor,
    };
  } finally {
    await openai.close();
    await ollama.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(JSON.stringify(await measureModelBackends(), null, 2) + '\n');
}
