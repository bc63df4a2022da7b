// Holds the SSE reader to the event-stream line rules as OpenAI-compatible
// servers use them: `data:` with or without its space, events of several
// lines, comments and other fields skipped, LF, CRLF and CR line endings
// (also split across chunks, as is a character of several bytes), `[DONE]`
// ending the read, a stream without it reported through `sawDone`, and a
// payload that is not JSON, an event past the cap or a body that is not an
// event stream at all named for what they are.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InfrastructureError } from '../../src/policy/policy-contract.js';
import { readServerSentEvents, SseProtocolError } from '../../src/models/openai/sse-reader.js';

/** A body delivered in exactly these pieces (strings or raw bytes). */
function body(...pieces: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at === pieces.length) return controller.close();
      const piece = pieces[at++]!;
      controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>, options?: { maxEventChars?: number }) {
  const reader = readServerSentEvents(stream, options);
  const values: unknown[] = [];
  for await (const value of reader) values.push(value);
  return { values, reader };
}

describe('SSE reader', () => {
  it('reads data lines with and without the space, and stops at [DONE]', async () => {
    const { values, reader } = await readAll(body('data: {"a":1}\n\ndata:{"b":2}\n\ndata: [DONE]\n\ndata: {"after":true}\n\n'));
    assert.deepEqual(values, [{ a: 1 }, { b: 2 }]);
    assert.equal(reader.sawDone, true);
    assert.equal(reader.events, 2);
  });

  it('joins the data lines of one event with a line feed', async () => {
    const { values } = await readAll(body('data: {"text":\ndata: "two lines"}\n\n', 'data: [DONE]\n\n'));
    assert.deepEqual(values, [{ text: 'two lines' }]);
  });

  it('skips comments, event, id and retry fields, and keep-alives with empty data', async () => {
    const { values, reader } = await readAll(body(': ping\n\nevent: message\nid: 7\nretry: 1000\ndata: {"n":1}\n\n:keep-alive\n\ndata:\n\ndata: [DONE]\n\n'));
    assert.deepEqual(values, [{ n: 1 }]);
    assert.equal(reader.sawDone, true);
    assert.equal(reader.strayLine, null);
  });

  it('takes CRLF and CR line endings, also when a CRLF is split across chunks', async () => {
    const crlf = await readAll(body('data: {"n":1}\r\n\r\ndata: {"n":2}\r', '\n\r\ndata: [DONE]\r\n\r\n'));
    assert.deepEqual(crlf.values, [{ n: 1 }, { n: 2 }]);
    assert.equal(crlf.reader.sawDone, true);
    const cr = await readAll(body('data: {"n":1}\r\rdata: {"n":2}\r\rdata: [DONE]\r\r'));
    assert.deepEqual(cr.values, [{ n: 1 }, { n: 2 }]);
    assert.equal(cr.reader.sawDone, true);
  });

  it('reassembles a character whose bytes are split across chunks, and a line split anywhere', async () => {
    const bytes = new TextEncoder().encode('data: {"t":"é€"}\n\ndata: [DONE]\n\n');
    const pieces = Array.from(bytes, (byte) => new Uint8Array([byte]));
    const { values, reader } = await readAll(body(...pieces));
    assert.deepEqual(values, [{ t: 'é€' }]);
    assert.equal(reader.sawDone, true);
  });

  it('reports a stream that ends without [DONE] through sawDone', async () => {
    const { values, reader } = await readAll(body('data: {"n":1}\n\n'));
    assert.deepEqual(values, [{ n: 1 }]);
    assert.equal(reader.sawDone, false);
    assert.equal(reader.cutOffTail, null);
  });

  it('keeps a last event without its blank line when its data is whole, and reports one cut in the middle', async () => {
    const whole = await readAll(body('data: {"n":1}\n\ndata: [DONE]'));
    assert.deepEqual(whole.values, [{ n: 1 }]);
    assert.equal(whole.reader.sawDone, true);
    const cut = await readAll(body('data: {"n":1}\n\ndata: {"choices":[{"del'));
    assert.deepEqual(cut.values, [{ n: 1 }]);
    assert.equal(cut.reader.sawDone, false);
    assert.equal(cut.reader.cutOffTail, '{"choices":[{"del');
  });

  it('fails on a payload that is not JSON, naming its line', async () => {
    await assert.rejects(readAll(body('data: {"n":1}\n\n: comment\ndata: not json at all\n\n')), (error: unknown) => {
      assert.ok(error instanceof SseProtocolError);
      assert.ok(error instanceof InfrastructureError);
      assert.match(error.message, /line 4 is not JSON \("not json at all"\)/);
      return true;
    });
  });

  it('fails on an event past the cap, whether it arrives in one line or many', async () => {
    const long = `data: "${'x'.repeat(200)}"\n\n`;
    await assert.rejects(readAll(body(long), { maxEventChars: 100 }), /runs past 100 characters/);
    const manyLines = `${'data: 1234567890\n'.repeat(20)}\n`;
    await assert.rejects(readAll(body(manyLines), { maxEventChars: 100 }), /runs past 100 characters/);
    // An unterminated line that keeps growing is stopped too, before the stream ends.
    await assert.rejects(readAll(body(...Array.from({ length: 50 }, () => 'xxxxxxxxxx')), { maxEventChars: 100 }), (error: unknown) => error instanceof SseProtocolError);
    assert.deepEqual((await readAll(body(long))).values, ['x'.repeat(200)]);
  });

  it('shows a body that is not an event stream by its first stray line', async () => {
    const { values, reader } = await readAll(body('<!DOCTYPE html>\n<html><body>Welcome to nginx!</body></html>\n'));
    assert.deepEqual(values, []);
    assert.equal(reader.sawDone, false);
    assert.equal(reader.strayLine, '<!DOCTYPE html>');
  });

  it('hands on an error of the body as it is', async () => {
    let pulls = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ === 0) controller.enqueue(new TextEncoder().encode('data: {"n":1}\n\n'));
        else controller.error(new RangeError('the wire broke'));
      },
    });
    const seen: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const value of readServerSentEvents(failing)) seen.push(value);
      })(),
      (error: unknown) => error instanceof RangeError && error.message === 'the wire broke',
    );
    assert.deepEqual(seen, [{ n: 1 }]);
  });
});
