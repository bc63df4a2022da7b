// The silence limit every model-server request runs under, against a real
// local HTTP server: silence before the answer and between two chunks fails
// the request; a slow but steady answer does not; an outside abort ends it.

import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fetchWithSilenceLimit, formatSeconds, SilenceTimeoutError } from '../../src/core/timed-fetch.js';

let url: string;
const open = new Set<ServerResponse>();
const server = createServer((request, response) => {
  open.add(response);
  response.on('close', () => open.delete(response));
  const path = request.url ?? '/';
  if (path === '/silent') return; // not even a status line
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  response.flushHeaders();
  if (path === '/stops') {
    response.write('{"n":1}\n');
    return; // then nothing
  }
  if (path === '/steady') {
    // Six chunks 60 ms apart: 360 ms in all, never silent for 150 ms.
    let n = 0;
    const timer = setInterval(() => {
      response.write(`{"n":${++n}}\n`);
      if (n === 6) {
        clearInterval(timer);
        response.end();
      }
    }, 60);
    return;
  }
  response.end('{"ok":true}\n');
});

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  for (const response of open) response.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('fetchWithSilenceLimit', () => {
  it('fails a request that gets no answer at all, after the limit', { timeout: 5000 }, async () => {
    const started = performance.now();
    await assert.rejects(fetchWithSilenceLimit({ silenceMs: 150 })(`${url}/silent`), (error: unknown) => {
      assert.ok(error instanceof SilenceTimeoutError);
      assert.equal(error.started, false);
      assert.match(error.message, /\/silent did not answer for 0\.15 s$/);
      return true;
    });
    assert.ok(performance.now() - started >= 140);
  });

  it('fails a body that stops coming, and says the answer had started', { timeout: 5000 }, async () => {
    const response = await fetchWithSilenceLimit({ silenceMs: 150 })(`${url}/stops`);
    assert.equal(response.status, 200);
    await assert.rejects(response.text(), (error: unknown) => error instanceof SilenceTimeoutError && error.started);
  });

  it('lets a slow, steady answer finish: it bounds silence, not length', { timeout: 5000 }, async () => {
    const response = await fetchWithSilenceLimit({ silenceMs: 150 })(`${url}/steady`);
    assert.equal((await response.text()).trim().split('\n').length, 6);
  });

  it('ends the request when the outside signal aborts', { timeout: 5000 }, async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(fetchWithSilenceLimit({ silenceMs: 10_000, signal: controller.signal })(`${url}/silent`), (error: Error) => error.name === 'AbortError');
  });

  it('passes a whole answer through unchanged', async () => {
    const response = await fetchWithSilenceLimit({ silenceMs: 1000 })(`${url}/whole`);
    assert.deepEqual(await response.json(), { ok: true });
    assert.equal(response.headers.get('content-type'), 'application/x-ndjson');
  });

  it('names timeouts in seconds', () => {
    assert.equal(formatSeconds(20_000), '20 s');
    assert.equal(formatSeconds(1500), '1.5 s');
  });
});
