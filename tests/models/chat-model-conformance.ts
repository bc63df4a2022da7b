// The conformance suite every chat-model provider passes unchanged, against a
// server speaking that provider's real wire protocol (a stand-in, or the
// engine with the tiny model): a turn that calls a tool comes back with its
// name and arguments as an object; a conversation's calls reach the server
// with their arguments intact, whatever the wire makes of them (objects,
// JSON text, a rendered prompt); a streamed answer and a whole one are the
// same turn; the pin is what the server reports; and each way a server fails
// (an HTTP error, a dropped connection, silence past the timeout, a body that
// is not its protocol) is an InfrastructureError with the provider's message,
// while an episode cut short gets its own reason back.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message, ToolDescriptor } from '../../src/core/conversation.js';
import { InfrastructureError, type ChatModel, type ChatTurn, type Sampling } from '../../src/models/chat-model.js';
import type { ModelCodec } from '../../src/models/codecs/model-codec.js';
import type { ToolCallRequest } from '../../src/models/model-action.js';

/** How a server can fail a chat request. */
export type ChatFailure = 'http error' | 'dropped connection' | 'silence' | 'not the protocol';

const DESCRIBED: Record<ChatFailure, string> = {
  'http error': 'an HTTP error',
  'dropped connection': 'a connection dropped mid-answer',
  silence: 'silence past the timeout',
  'not the protocol': 'a body that is not the protocol (a web page)',
};

/** The timeout the suite gives a model whose server it makes fail: silence ends a test in half a second. */
export const CONFORMANCE_TIMEOUT_MS = 500;

/** The timeout of a model whose server answers: a loaded machine may keep a healthy server waiting past half a second. */
export const ANSWER_TIMEOUT_MS = 10_000;

export type Transport = 'streamed' | 'whole';

/** A running server, and the provider's model on it, made through the registry. */
export interface ChatModelStandIn {
  /** The model under test, made through the registry (no retries), answering as `transport` says (default: the stand-in's own way), silent at most `timeoutMs` (default ANSWER_TIMEOUT_MS). */
  model(options?: { transport?: Transport; timeoutMs?: number }): Promise<ChatModel>;
  /** The ways this provider can be asked for answers: streamed always, whole where it can be. */
  readonly transports: readonly Transport[];
  /** The codec that reads a turn the provider hands back as raw text (raw mode); the policy uses the same. */
  readonly codec: ModelCodec;
  /** A first turn that makes the model call a tool, with the tools it may call. */
  readonly scenario: { messages: Message[]; tools: ToolDescriptor[]; expectedTool: string; expectedCalls?: ToolCallRequest[] };
  /** `<provider>:<model>` */
  readonly spec: string;
  /** The pin the model must report: the digest or revision the server gives its weights. */
  readonly pin: string;
  /** The JSON bodies of every chat request the server received, in order. */
  chatRequests(): unknown[];
  /** Every chat request fails this way from now on. */
  fail(failure: ChatFailure): void;
  /** The message that failure must become, word for word (a pattern where it quotes a port or a system error). */
  expectedError(failure: ChatFailure): string | RegExp;
  close(): Promise<void>;
}

export interface ChatModelProviderUnderTest {
  /** How the suite names it, e.g. `ollama native (fake-ollama)`. */
  readonly label: string;
  start(): Promise<ChatModelStandIn>;
}

const SAMPLING: Sampling = { seed: 7, temperature: 0, maxTokens: 200 };
const signal = () => new AbortController().signal;

async function withStandIn(provider: ChatModelProviderUnderTest, body: (standIn: ChatModelStandIn) => Promise<void>): Promise<void> {
  const standIn = await provider.start();
  try {
    await body(standIn);
  } finally {
    await standIn.close();
  }
}

/** The calls of a turn as a policy reads them: the server's own, else what the codec reads from the raw text. */
function callsOf(turn: ChatTurn, codec: ModelCodec): ToolCallRequest[] {
  if (turn.toolCalls.length > 0) return turn.toolCalls;
  const action = codec.parse(turn.raw ?? turn.text);
  if (action.kind === 'tool_call') return [{ name: action.name, arguments: action.arguments }];
  if (action.kind === 'tool_calls') return action.calls;
  return [];
}

type Loose = Record<string, any>;

/** The calls of the conversation a request carried, in each wire's own shape: Ollama's objects, OpenAI's JSON text, or a prompt's rendered blocks. */
export function sentCalls(body: unknown): ToolCallRequest[] {
  const request = body as Loose;
  if (typeof request.prompt === 'string') {
    return [...request.prompt.matchAll(/<tool_call>\n(.*?)\n<\/tool_call>/gs)].flatMap((match) => {
      try {
        const call = JSON.parse(match[1]!) as Loose;
        return [{ name: call.name as string, arguments: call.arguments as unknown }];
      } catch {
        // The system turn's own example of the syntax is not a call.
        return [];
      }
    });
  }
  return ((request.messages ?? []) as Loose[]).flatMap((message) =>
    ((message.tool_calls ?? []) as Loose[]).map((call) => ({
      name: call.function.name as string,
      arguments: typeof call.function.arguments === 'string' ? (JSON.parse(call.function.arguments) as unknown) : (call.function.arguments as unknown),
    })),
  );
}

export function chatModelConformance(provider: ChatModelProviderUnderTest): void {
  describe(`chat-model conformance: ${provider.label}`, () => {
    it('answers a turn that calls a tool with the tool and its arguments as an object', async () => {
      await withStandIn(provider, async (standIn) => {
        const model = await standIn.model();
        assert.equal(model.spec, standIn.spec);
        const { messages, tools, expectedTool, expectedCalls } = standIn.scenario;
        const turn = await model.chat({ messages, tools, sampling: SAMPLING, signal: signal() });
        const calls = callsOf(turn, standIn.codec);
        assert.ok(calls.length > 0, `the model called no tool: ${JSON.stringify(turn)}`);
        assert.equal(calls[0]!.name, expectedTool);
        for (const call of calls) assert.ok(typeof call.arguments === 'object' && call.arguments !== null && !Array.isArray(call.arguments), `arguments ${JSON.stringify(call.arguments)}`);
        if (expectedCalls) assert.deepEqual(calls, expectedCalls);
      });
    });

    it("sends a conversation's calls back to the server with their arguments intact", async () => {
      await withStandIn(provider, async (standIn) => {
        const model = await standIn.model();
        const { messages, tools } = standIn.scenario;
        const calls = [
          { id: 'call_1', name: tools[0]!.name, arguments: { number: 3907, label: 'bög — “quoted”', nested: { list: [1, 2.5, null, true], empty: {} } } },
          { id: 'call_2', name: tools[1]!.name, arguments: {} },
        ];
        const conversation: Message[] = [
          ...messages,
          { role: 'assistant', content: '', tool_calls: calls },
          { role: 'tool', tool_call_id: 'call_1', name: calls[0]!.name, content: '{"ok": true}', tool_result: { ok: true } },
          { role: 'tool', tool_call_id: 'call_2', name: calls[1]!.name, content: '{"ok": true}', tool_result: { ok: true } },
        ];
        await model.chat({ messages: conversation, tools, sampling: SAMPLING, signal: signal() });
        const requests = standIn.chatRequests();
        assert.equal(requests.length, 1);
        assert.deepEqual(
          sentCalls(requests[0]),
          calls.map(({ name, arguments: args }) => ({ name, arguments: args })),
        );
      });
    });

    it('gives the same turn again for the same seed, and streamed and whole alike where the provider answers both ways', async () => {
      await withStandIn(provider, async (standIn) => {
        assert.ok(standIn.transports.includes('streamed'));
        const { messages, tools } = standIn.scenario;
        const ask = async (transport: Transport) => (await standIn.model({ transport })).chat({ messages, tools, sampling: SAMPLING, signal: signal() });
        const streamed = await ask('streamed');
        for (const transport of standIn.transports) {
          const turn = await ask(transport);
          assert.equal(turn.text, streamed.text, transport);
          assert.deepEqual(turn.toolCalls, streamed.toolCalls, transport);
          assert.equal(turn.raw, streamed.raw, transport);
        }
      });
    });

    it('reports the pin of the weights the server serves, in the actor a record names', async () => {
      await withStandIn(provider, async (standIn) => {
        const model = await standIn.model();
        assert.equal(model.pin, standIn.pin);
        const actor = model.actor('policy', { sampling: SAMPLING });
        assert.equal(actor.role, 'policy');
        assert.equal(actor.kind, 'model');
        assert.equal(actor.version, standIn.pin.replace(/^sha256:/, '').slice(0, 12));
        assert.ok(model.describe().includes(actor.version));
      });
    });

    for (const failure of Object.keys(DESCRIBED) as ChatFailure[]) {
      it(`turns ${DESCRIBED[failure]} into an InfrastructureError with the provider's message`, async () => {
        await withStandIn(provider, async (standIn) => {
          // Only silence is about the timeout; a server that fails after it starts to answer (the engine, cut mid-answer) may start late on a loaded machine.
          const timeoutMs = failure === 'silence' ? CONFORMANCE_TIMEOUT_MS : ANSWER_TIMEOUT_MS;
          const model = await standIn.model({ timeoutMs });
          standIn.fail(failure);
          const { messages, tools } = standIn.scenario;
          const started = performance.now();
          const error = await model.chat({ messages, tools, sampling: SAMPLING, signal: signal() }).then(
            () => assert.fail('expected the turn to fail'),
            (caught: unknown) => caught,
          );
          assert.ok(error instanceof InfrastructureError, `not an InfrastructureError: ${String(error)}`);
          const expected = standIn.expectedError(failure);
          if (typeof expected === 'string') assert.equal(error.message, expected);
          else assert.match(error.message, expected);
          // Silence ends at the timeout, not at whatever limit the test runner has.
          assert.ok(performance.now() - started < timeoutMs + 5_000);
        });
      });
    }

    it("rethrows the episode's own reason when the episode is cut short, not an InfrastructureError", async () => {
      await withStandIn(provider, async (standIn) => {
        const model = await standIn.model({ timeoutMs: CONFORMANCE_TIMEOUT_MS });
        standIn.fail('silence');
        const episode = new AbortController();
        const reason = new Error('wall time');
        setTimeout(() => episode.abort(reason), 50);
        const { messages, tools } = standIn.scenario;
        await assert.rejects(model.chat({ messages, tools, sampling: SAMPLING, signal: episode.signal }), (error: unknown) => error === reason);
      });
    });
  });
}
