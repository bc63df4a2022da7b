// The conformance suite every embedding provider passes unchanged, against a
// stand-in server speaking that provider's real wire protocol: vectors in
// input order and of one dimension, batches that embed exactly as single
// texts do, the pin of the weights reported, and each way a server fails
// (an HTTP error, a dropped connection, silence past the timeout, a body that
// is not its protocol) turned into a usage error (exit 2) with the message
// and fix the provider has always given.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FactoryError } from '../../src/core/errors.js';
import type { Embedder } from '../../src/models/embedding/embedder.js';

/** How a stand-in's embedding endpoint can fail. */
export type EmbeddingFailure = 'http error' | 'dropped connection' | 'silence' | 'not the protocol';

const DESCRIBED: Record<EmbeddingFailure, string> = {
  'http error': 'an HTTP error',
  'dropped connection': 'a connection dropped before the answer',
  silence: 'silence past the timeout',
  'not the protocol': 'a body that is not the protocol (a web page)',
};

/** The timeout the suite gives its embedders: silence ends a test in half a second. */
export const CONFORMANCE_TIMEOUT_MS = 500;

/** A running stand-in server, and the provider's embedder pointed at it. */
export interface EmbedderStandIn {
  /** The embedder under test, made through the registry with these settings (and CONFORMANCE_TIMEOUT_MS). */
  embedder(settings?: { batchSize?: number }): Embedder;
  /** What the embedder must report as its name. */
  readonly name: string;
  /** How long every vector the stand-in serves is. */
  readonly dimensions: number;
  /** The pin (digest) the embedder must report once it has embedded. */
  readonly pin: string;
  /** The texts of every embedding request so far, one list per request. */
  embeddingRequests(): string[][];
  /** Every embedding request fails this way from now on. */
  fail(failure: EmbeddingFailure): void;
  /** The error that failure must become: the provider's message and fix, word for word. */
  expectedError(failure: EmbeddingFailure): { message: string; fix: string };
  close(): Promise<void>;
}

export interface EmbedderProviderUnderTest {
  /** How the suite names it, e.g. `ollama (fake-ollama)`. */
  readonly label: string;
  start(): Promise<EmbedderStandIn>;
}

const TEXTS = ['find the open bugs', 'close issue 12 as completed', 'héllo, wörld', '', 'a longer text about a calendar event tomorrow at nine'];

async function withStandIn(provider: EmbedderProviderUnderTest, body: (standIn: EmbedderStandIn) => Promise<void>): Promise<void> {
  const standIn = await provider.start();
  try {
    await body(standIn);
  } finally {
    await standIn.close();
  }
}

export function embedderConformance(provider: EmbedderProviderUnderTest): void {
  describe(`embedder conformance: ${provider.label}`, () => {
    it('returns one vector per text, in input order, all of the dimension the model has', async () => {
      await withStandIn(provider, async (standIn) => {
        const embedder = standIn.embedder();
        assert.equal(embedder.name, standIn.name);
        const vectors = await embedder.embed(TEXTS);
        assert.equal(vectors.length, TEXTS.length);
        for (const vector of vectors) {
          assert.equal(vector.length, standIn.dimensions);
          assert.ok(vector.every((value) => Number.isFinite(value)));
        }
        // Distinct texts embed apart, so a vector in the wrong place cannot pass for the right one; one text alone cannot be out of order.
        assert.equal(new Set(vectors.map((vector) => JSON.stringify(vector))).size, TEXTS.length);
        for (const [index, text] of TEXTS.entries()) assert.deepEqual(await embedder.embed([text]), [vectors[index]], `vector ${index}`);
        assert.deepEqual(await embedder.embed([...TEXTS].reverse()), [...vectors].reverse());
      });
    });

    it('embeds a batch exactly as it embeds each text alone, in requests of at most the batch size', async () => {
      await withStandIn(provider, async (standIn) => {
        const whole = await standIn.embedder().embed(TEXTS);
        assert.deepEqual(standIn.embeddingRequests(), [TEXTS], 'the default batch holds all five texts');
        const batched = await standIn.embedder({ batchSize: 2 }).embed(TEXTS);
        assert.deepEqual(standIn.embeddingRequests().slice(1), [TEXTS.slice(0, 2), TEXTS.slice(2, 4), TEXTS.slice(4)]);
        const alone = standIn.embedder();
        const single: number[][] = [];
        for (const text of TEXTS) single.push(...(await alone.embed([text])));
        assert.deepEqual(batched, whole);
        assert.deepEqual(single, whole);
        assert.deepEqual(await alone.embed([]), [], 'no texts, no vectors');
        assert.equal(standIn.embeddingRequests().length, 1 + 3 + TEXTS.length, 'and no request for them');
      });
    });

    it('reports the pin of the weights that embedded', async () => {
      await withStandIn(provider, async (standIn) => {
        const embedder = standIn.embedder();
        await embedder.embed(TEXTS.slice(0, 1));
        assert.equal(embedder.digest, standIn.pin);
      });
    });

    for (const failure of Object.keys(DESCRIBED) as EmbeddingFailure[]) {
      it(`turns ${DESCRIBED[failure]} into a usage error with the provider's message and fix`, async () => {
        await withStandIn(provider, async (standIn) => {
          standIn.fail(failure);
          const started = performance.now();
          const error = await standIn
            .embedder()
            .embed(TEXTS)
            .then(
              () => assert.fail('expected the embedding to fail'),
              (caught: unknown) => caught,
            );
          assert.ok(error instanceof FactoryError, `not a FactoryError: ${String(error)}`);
          assert.equal(error.code, 'usage');
          const expected = standIn.expectedError(failure);
          assert.equal(error.message, expected.message);
          assert.equal(error.fix, expected.fix);
          // Silence ends at the timeout, not at whatever limit the test runner has.
          assert.ok(performance.now() - started < CONFORMANCE_TIMEOUT_MS + 5_000);
          assert.equal(standIn.embeddingRequests().length, 1, 'one request, no retry');
        });
      });
    }
  });
}
