// Hostile: what no well-behaved client sends to `serve`, over stdio and over
// Streamable HTTP. Every bad message gets a JSON-RPC error naming the limit or
// what is wrong, with the request's id when it has one, and the session goes
// on: a line or body past the size limit (stdio -32600; HTTP 413 at once, read
// no further than the limit, and heard even by a client that sends its whole
// body before it reads), nesting past the depth limit, text that is not JSON,
// JSON that is not JSON-RPC. Over HTTP, sessions are capped (--max-sessions):
// one more initialize is refused with 503 until a session ends.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { MAX_JSON_DEPTH } from '../../src/core/bounded-json.js';
import { MAX_STDIO_MESSAGE_BYTES } from '../../src/world/bounded-stdio-transport.js';
import { MAX_HTTP_BODY_BYTES } from '../../src/world/http-world-host.js';
import { CLI, REPO_ROOT, runCliWithin } from '../helpers.js';
import { startServeHttp, stopServe } from '../serve-http.js';
import { deepCall, INITIALIZE, oversizedCall, startInitializedSession, type StdioSession } from '../stdio-session.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function startStdioServe(): Promise<StdioSession> {
  return startInitializedSession([CLI, 'serve', 'tasks', '--seed', '2'], process.env, 'tasks');
}

async function stillServes(session: StdioSession, id: number): Promise<void> {
  session.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }));
  const answer = await session.answer((candidate) => candidate.id === id);
  assert.ok(answer.result?.tools?.some((tool: { name: string }) => tool.name === 'list_tasks'), JSON.stringify(answer).slice(0, 500));
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body });
  const text = await response.text();
  const data = text.startsWith('event:') ? JSON.parse(/^data: (.*)$/m.exec(text)![1]!) : text === '' ? undefined : JSON.parse(text);
  return { status: response.status, headers: response.headers, body: data };
}

async function openSession(url: string): Promise<string> {
  const opened = await post(url, JSON.stringify(INITIALIZE));
  assert.equal(opened.status, 200, JSON.stringify(opened.body));
  const id = opened.headers.get('mcp-session-id')!;
  const ready = await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' });
  assert.equal(ready.status, 202);
  return id;
}

/**
 * Sends `bytes` of body the way a simple client does (urllib, requests): the
 * whole body first, then the answer is read; written by hand on a socket so
 * nothing in between reacts to an early answer. A server that stops reading
 * and closes makes this client fail with EPIPE or ECONNRESET instead of
 * hearing why.
 */
function postWholeBodyFirst(url: string, bytes: number, chunked: boolean, headers: Record<string, string> = {}): Promise<{ status?: number; body?: string; error?: string }> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let sent = false;
    let settled = false;
    const settle = (result: { status?: number; body?: string; error?: string }) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(result);
    };
    // The answer, once it is all in: status line, headers, Content-Length bytes of body.
    const answer = () => {
      const text = received.toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      if (headEnd === -1) return undefined;
      const length = Number(/\r\ncontent-length: *([0-9]+)/i.exec(text.slice(0, headEnd))?.[1] ?? NaN);
      if (!Number.isFinite(length) || received.length < headEnd + 4 + length) return undefined;
      return { status: Number(text.slice(9, 12)), body: received.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8') };
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const complete = answer();
      if (complete && sent) settle(complete);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => settle({ ...answer(), error: error.code ?? error.message }));
    socket.on('close', () => settle({ ...answer(), error: sent ? 'closed before the answer was complete' : 'closed while the body was being sent' }));
    const head = [
      `POST ${pathname} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      ...Object.entries({ ...MCP_HEADERS, ...headers }).map(([name, value]) => `${name}: ${value}`),
      chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes}`,
      '',
      '',
    ].join('\r\n');
    socket.write(head);
    const piece = Buffer.alloc(1024 * 1024, 0x78);
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        const part = left >= piece.length ? piece : piece.subarray(0, left);
        left -= part.length;
        const framed = chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part;
        if (!socket.write(framed)) return void socket.once('drain', pump);
      }
      socket.write(chunked ? '0\r\n\r\n' : '', () => {
        sent = true;
        const complete = answer();
        if (complete) settle(complete);
      });
    };
    pump();
  });
}

describe('hostile: serve over stdio', () => {
  it('answers a line over the size limit, deep nesting, non-JSON and non-JSON-RPC with errors, and goes on until stdin closes', { timeout: 120_000 }, async () => {
    const session = await startStdioServe();
    try {
      session.send(oversizedCall(2, 'list_tasks', MAX_STDIO_MESSAGE_BYTES + 1024 * 1024));
      const tooLarge = await session.answer((answer) => answer.id === 2);
      assert.equal(tooLarge.error?.code, -32600, JSON.stringify(tooLarge));
      assert.match(tooLarge.error!.message, new RegExp(`over the limit of ${MAX_STDIO_MESSAGE_BYTES} bytes`));
      assert.ok(session.running(), 'serve is still running after an oversized line');

      session.send(deepCall(3, 'list_tasks', 10_000));
      const deep = await session.answer((answer) => answer.id === 3);
      assert.equal(deep.error?.code, -32600, JSON.stringify(deep));
      assert.match(deep.error!.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));

      session.send('{"jsonrpc":"2.0","id":4,"method":"tools/list",');
      const torn = await session.answer((answer) => answer.error?.code === -32700);
      assert.match(torn.error!.message, /^Parse error: /);
      session.send('{"jsonrpc":"1.0","id":5,"method":"tools/list"}');
      const wrongVersion = await session.answer((answer) => answer.id === 5);
      assert.equal(wrongVersion.error?.code, -32600);
      assert.match(wrongVersion.error!.message, /"jsonrpc" must be "2\.0"/);

      await stillServes(session, 6);
      assert.equal(await session.end(), 0);
      assert.match(session.stderr(), /refused a message/);
    } finally {
      session.child.kill('SIGKILL');
    }
  });
});

describe('hostile: serve over HTTP', () => {
  it(`answers 413 to a 50 MB body at once, heard by a client that sends it all first, and the session goes on`, { timeout: 120_000 }, async () => {
    const server = await startServeHttp(['tasks', '--seed', '2']);
    try {
      const session = await openSession(server.url);
      for (const chunked of [false, true]) {
        const answer = await postWholeBodyFirst(server.url, 50_000_000, chunked, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
        assert.equal(answer.error, undefined, `the ${chunked ? 'chunked' : 'sized'} upload was cut off (${answer.error}) instead of answered`);
        assert.equal(answer.status, 413, answer.body);
        const body = JSON.parse(answer.body!);
        assert.equal(body.error.code, -32600);
        assert.match(body.error.message, new RegExp(`over the limit of ${MAX_HTTP_BODY_BYTES} bytes`));
      }
      const listed = await post(server.url, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }), { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
      assert.equal(listed.status, 200);
      assert.ok(listed.body.result.tools.length > 0);
    } finally {
      assert.equal(await stopServe(server.child), 0);
    }
  });

  it('answers deep nesting with 400 -32600 naming the limit, and JSON that is not JSON-RPC with 400 -32600, both with the id', { timeout: 120_000 }, async () => {
    const server = await startServeHttp(['tasks', '--seed', '2']);
    try {
      const session = await openSession(server.url);
      const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
      const deep = await post(server.url, deepCall(11, 'list_tasks', 10_000), headers);
      assert.equal(deep.status, 400, JSON.stringify(deep.body));
      assert.deepEqual([deep.body.id, deep.body.error.code], [11, -32600]);
      assert.match(deep.body.error.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
      const notRpc = await post(server.url, '{"jsonrpc":"2.0","id":12,"method":"tools/list","params":[]}', headers);
      assert.equal(notRpc.status, 400);
      assert.deepEqual([notRpc.body.id, notRpc.body.error.code], [12, -32600]);
      assert.match(notRpc.body.error.message, /"params" must be an object/);
      const notJson = await post(server.url, '{"jsonrpc":', headers);
      assert.deepEqual([notJson.status, notJson.body.error.code], [400, -32700]);
    } finally {
      assert.equal(await stopServe(server.child), 0);
    }
  });

  it('holds at most --max-sessions sessions: one more initialize gets 503 naming the cap; DELETE frees a slot', { timeout: 120_000 }, async () => {
    const server = await startServeHttp(['tasks', '--seed', '2', '--max-sessions', '2']);
    try {
      const first = await openSession(server.url);
      await openSession(server.url);
      const refused = await post(server.url, JSON.stringify({ ...INITIALIZE, id: 'third' }));
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.id, 'third');
      assert.match(refused.body.error.message, /2 sessions are open.*--max-sessions/);
      const closed = await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': first, 'mcp-protocol-version': '2025-06-18' } });
      assert.equal(closed.status, 200);
      await openSession(server.url);
    } finally {
      assert.equal(await stopServe(server.child), 0);
    }
  });

  it('documents the limits and --max-sessions in --help', { timeout: 60_000 }, async () => {
    const help = await runCliWithin(50_000, REPO_ROOT, 'serve', '--help');
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /--max-sessions <n>/);
    assert.match(help.stdout.replace(/\s+/g, ' '), /10 MiB/);
    assert.match(help.stdout.replace(/\s+/g, ' '), /4 MiB/);
    assert.match(help.stdout.replace(/\s+/g, ' '), new RegExp(`${MAX_JSON_DEPTH} levels`));
  });
});
