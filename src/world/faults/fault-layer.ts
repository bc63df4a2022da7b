// Owns fault injection at the MCP boundary: a JSON-RPC bridge between a
// client-facing transport and a server-facing one that forwards every message
// untouched except where the fault plan fires. It serves tools/list itself
// (to paginate, empty the first page, hide renamed tools) and may answer,
// delay, spoil, drop or disconnect a tools/call. The server never knows; the
// same code runs in-process under the factory and as the standalone proxy.

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, Tool } from '@modelcontextprotocol/sdk/types.js';
import { MAX_JSON_DEPTH, valueDepth } from '../../core/bounded-json.js';
import { isJsonObject, type JsonObject } from '../../core/json-value.js';
import { substream } from '../../core/random.js';
import { DEFAULT_ERROR_MESSAGES, param, type FaultEntry, type FaultKind } from './fault-plan.js';
import { callKey, type FaultPlace, type FaultState } from './fault-state.js';
import { cutText, oversize, violateOutputSchema } from './result-mutation.js';

type Id = string | number;
type Message = JSONRPCMessage & Record<string, any>;

const CALL_FAULTS: readonly FaultKind[] = [
  'jsonrpc_error', 'tool_error', 'transient', 'timeout', 'latency', 'wrong_result_schema',
  'truncated_result', 'tool_renamed', 'disconnect', 'stale_read',
];

const ERROR_TEXT: Record<number, string> = {
  [-32603]: 'Internal error',
  [-32602]: 'Invalid params',
  [-32000]: 'Server error: upstream unavailable',
  [-32001]: 'Request timed out upstream',
};

const OWN_ID_PREFIX = 'episode-factory/fault-layer/';
const MAX_CATALOG_PAGES = 1000;

/** An error the server answered one of the layer's own requests with. */
class UpstreamError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
const CURSOR_PREFIX = 'episode-factory:';

/** What to do with the server's answer to a forwarded call: a message to deliver, or null to drop it. */
type AfterResponse = (response: Message) => Message | null | Promise<Message | null>;

/** Who ended the connection: the client side, the server side, a disconnect fault, or the owner. */
export type CloseReason = 'client' | 'server' | 'fault' | 'owner';

export interface FaultLayerOptions {
  /** Called once, when the layer has closed both sides. */
  onClosed?: (reason: CloseReason) => void;
  /** Problems that are not the client's or the server's to see (a failed send). */
  onError?: (error: Error) => void;
}

export class FaultLayer {
  private readonly forwarded = new Map<Id, AfterResponse>();
  private readonly own = new Map<string, { resolve: (result: JsonObject) => void; reject: (error: Error) => void }>();
  /** Calls the layer will never answer (timeouts that did not reach the server). */
  private readonly held = new Set<Id>();
  private readonly listings = new Map<number, Tool[][]>();
  /** The server's catalog as last read; kept for telling reads from writes even while stale. */
  private upstreamTools: Tool[] | undefined;
  private upstreamStale = true;
  private ownCounter = 0;
  private initializeId: Id | undefined;
  private handshakeDone = false;
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  /**
   * Client messages are handled one at a time, in arrival order, so the
   * fault draws happen in message order even when handling one has to wait
   * for the server (a catalog read).
   */
  private clientQueue: Promise<void> = Promise.resolve();

  constructor(
    private readonly state: FaultState,
    private readonly downstream: Transport,
    private readonly upstream: Transport,
    private readonly options: FaultLayerOptions = {},
  ) {}

  async start(): Promise<void> {
    this.downstream.onmessage = (message) => {
      this.clientQueue = this.clientQueue.then(() => this.fromClient(message as Message)).catch((error) => this.failed(message as Message, error));
    };
    this.upstream.onmessage = (message) => this.fromServer(message as Message);
    this.downstream.onclose = () => void this.close('client');
    this.upstream.onclose = () => void this.close('server');
    this.downstream.onerror = (error) => this.report(error);
    this.upstream.onerror = (error) => this.report(error);
    await this.upstream.start();
    await this.downstream.start();
  }

  async close(reason: CloseReason = 'owner'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const { reject } of this.own.values()) reject(new Error('fault layer closed'));
    this.own.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([this.downstream.close(), this.upstream.close()]);
    this.options.onClosed?.(reason);
  }

  /** Whether the server answered the client's initialize request. */
  get handshakeCompleted(): boolean {
    return this.handshakeDone;
  }

  private report(error: unknown): void {
    this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
  }

  /** Handling a client's message failed: a request still gets an answer, so the client never waits for one that will not come. */
  private failed(message: Message, error: unknown): void {
    this.report(error);
    if ('method' in message && 'id' in message) this.answerError(message.id, -32603, `Internal error: ${(error as Error)?.message ?? String(error)}`);
  }

  private send(transport: Transport, message: Message): void {
    if (this.closed) return;
    transport.send(message).catch((error) => this.report(error));
  }

  private toClient(message: Message): void {
    if (this.closed) return;
    this.downstream.send(message).catch((error: Error) => {
      this.report(error);
      // An answer the client cannot be sent (one JSON.stringify cannot write) becomes an error it can.
      if (!('method' in message) && 'result' in message && 'id' in message) {
        this.answerError(message.id as Id, -32603, `Internal error: the server's answer could not be sent on: ${error.message}`);
      }
    });
  }

  private toServer(message: Message): void {
    this.send(this.upstream, message);
  }

  private answer(id: Id, result: JsonObject): void {
    this.toClient({ jsonrpc: '2.0', id, result } as Message);
  }

  private answerError(id: Id, code: number, message: string): void {
    this.toClient({ jsonrpc: '2.0', id, error: { code, message } } as Message);
  }

  // ---- client → server ------------------------------------------------------

  private async fromClient(message: Message): Promise<void> {
    if ('method' in message && 'id' in message) {
      if (message.method === 'tools/list') return this.serveList(message);
      if (message.method === 'tools/call') return this.serveCall(message);
      if (message.method === 'initialize') this.initializeId = message.id;
    } else if ('method' in message && message.method === 'notifications/cancelled') {
      const requestId = message.params?.requestId as Id | undefined;
      if (requestId !== undefined && this.held.delete(requestId)) return;
      // The client gave up on it: a late answer is of no use to anyone.
      if (requestId !== undefined) this.forwarded.delete(requestId);
    }
    this.toServer(message);
  }

  // ---- server → client ------------------------------------------------------

  private fromServer(message: Message): void {
    if (!('method' in message) && 'id' in message) {
      const id = message.id as Id;
      if (typeof id === 'string' && this.own.has(id)) {
        const waiter = this.own.get(id)!;
        this.own.delete(id);
        if ('error' in message) waiter.reject(new UpstreamError(message.error.code, message.error.message));
        else waiter.resolve(message.result as JsonObject);
        return;
      }
      const after = this.forwarded.get(id);
      if (after) {
        this.forwarded.delete(id);
        let out: Message | null | Promise<Message | null>;
        try {
          out = after(message);
        } catch (error) {
          this.report(error);
          out = message;
        }
        // Deliver in order unless the fault itself delays the answer.
        if (out instanceof Promise) out.then((late) => late && this.toClient(late)).catch((error) => this.report(error));
        else if (out) this.toClient(out);
        return;
      }
      if (id === this.initializeId && 'result' in message) {
        this.initializeId = undefined;
        this.handshakeDone = true;
        return this.toClient(this.advertiseListChanged(message));
      }
    }
    if ('method' in message && message.method === 'notifications/tools/list_changed') this.upstreamStale = true;
    this.toClient(message);
  }

  /** A plan that renames tools needs a client that listens for list_changed. */
  private advertiseListChanged(message: Message): Message {
    if (!this.state.live.some((entry) => entry.kind === 'tool_renamed')) return message;
    const result = message.result as JsonObject;
    const capabilities = isJsonObject(result.capabilities) ? result.capabilities : {};
    const tools = isJsonObject(capabilities.tools) ? capabilities.tools : {};
    return { ...message, result: { ...result, capabilities: { ...capabilities, tools: { ...tools, listChanged: true } } } } as Message;
  }

  private requestServer(method: string, params: JsonObject): Promise<JsonObject> {
    if (this.closed) return Promise.reject(new Error('fault layer closed'));
    const id = `${OWN_ID_PREFIX}${++this.ownCounter}`;
    return new Promise((resolve, reject) => {
      this.own.set(id, { resolve, reject });
      this.toServer({ jsonrpc: '2.0', id, method, params } as Message);
    });
  }

  // ---- catalog ---------------------------------------------------------------

  private async catalog(): Promise<Tool[]> {
    if (this.upstreamTools && !this.upstreamStale) return this.upstreamTools;
    const tools: Tool[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      if (++pages > MAX_CATALOG_PAGES) throw new UpstreamError(-32603, `the server's tools/list did not end after ${MAX_CATALOG_PAGES} pages`);
      const page = await this.requestServer('tools/list', cursor === undefined ? {} : { cursor });
      tools.push(...(Array.isArray(page.tools) ? (page.tools as unknown as Tool[]) : []));
      cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    this.upstreamTools = tools;
    this.upstreamStale = false;
    return tools;
  }

  private visible(tools: Tool[]): Tool[] {
    return tools.flatMap((tool) => {
      if (!this.state.renamed.has(tool.name)) return [tool];
      const renamed = this.state.renamed.get(tool.name);
      return renamed === null ? [] : [{ ...tool, name: renamed! }];
    });
  }

  /** The upstream name behind a visible name, or undefined if that name no longer exists. */
  private upstreamName(name: string): string | undefined {
    if (this.state.renamed.has(name)) return undefined;
    for (const [original, renamed] of this.state.renamed) if (renamed === name) return original;
    return name;
  }

  private isRead(tool: string): boolean {
    const declared = this.upstreamTools?.find((candidate) => candidate.name === tool)?.annotations?.readOnlyHint === true;
    const listed = this.state.live.some((entry) => entry.kind === 'stale_read' && (param<string[]>(entry, 'reads', []) ?? []).includes(tool));
    return declared || listed;
  }

  private async serveList(request: Message): Promise<void> {
    const cursor = request.params?.cursor as string | undefined;
    if (cursor !== undefined) {
      const match = new RegExp(`^${CURSOR_PREFIX}(\\d+):(\\d+)$`).exec(cursor);
      const pages = match ? this.listings.get(Number(match[1])) : undefined;
      const page = match ? Number(match[2]) : -1;
      if (!pages || page >= pages.length) return this.answerError(request.id, -32602, `Invalid cursor: ${cursor}`);
      return this.answerPage(request.id, Number(match![1]), page);
    }
    const list = ++this.state.lists;
    let tools: Tool[];
    try {
      tools = this.visible(await this.catalog());
    } catch (error) {
      // The server's own error, unchanged: the layer adds faults, not its own failures.
      if (error instanceof UpstreamError) return this.answerError(request.id, error.code, error.message);
      return this.answerError(request.id, -32603, (error as Error).message);
    }
    const place: FaultPlace = { tool: null, call: null, list };
    const pages: Tool[][] = [];
    const empty = this.state.choose(['empty_first_page'], place);
    if (empty) {
      const count = param(empty, 'empty_pages', 1);
      for (let index = 0; index < count; index++) pages.push([]);
      this.state.record(empty, place, `${count} empty page${count === 1 ? '' : 's'} with a nextCursor before the ${tools.length} tools`);
    }
    const paginate = this.state.choose(['paginate_tools'], place);
    const size = paginate ? param(paginate, 'page_size', 2) : Math.max(tools.length, 1);
    for (let start = 0; start < tools.length; start += size) pages.push(tools.slice(start, start + size));
    if (tools.length === 0) pages.push([]);
    if (paginate) this.state.record(paginate, place, `${tools.length} tools served in ${Math.ceil(tools.length / size)} pages of ${size}`);
    this.listings.set(list, pages);
    this.answerPage(request.id, list, 0);
  }

  private answerPage(id: Id, list: number, page: number): void {
    const pages = this.listings.get(list)!;
    const result: JsonObject = { tools: pages[page] as unknown as JsonObject[] };
    if (page + 1 < pages.length) result.nextCursor = `${CURSOR_PREFIX}${list}:${page + 1}`;
    this.answer(id, result);
  }

  // ---- calls -------------------------------------------------------------------

  private async serveCall(request: Message): Promise<void> {
    const call = ++this.state.calls;
    const name = String(request.params?.name);
    const args = (request.params?.arguments ?? {}) as JsonObject;
    // The layer keys calls by their canonical arguments: past the limit that recursion is not safe.
    if (valueDepth(args, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      return this.answerError(request.id, -32602, `Invalid params: the arguments nest deeper than ${MAX_JSON_DEPTH} levels (the limit on nesting)`);
    }
    const original = this.upstreamName(name);
    if (original === undefined) return this.answerError(request.id, -32602, `Unknown tool: ${name}`);
    const place: FaultPlace = { tool: original, call, list: null };
    const key = callKey(original, args);
    const upstreamRequest = { ...request, params: { ...request.params, name: original } } as Message;

    const tracker = this.state.transient.get(key);
    if (tracker && tracker.remaining > 0) {
      tracker.remaining--;
      this.state.record(tracker.entry, place, `attempt ${tracker.total - tracker.remaining} of ${tracker.total} fails`);
      return this.failTransient(request.id, tracker.entry);
    }

    let tools: Tool[];
    try {
      tools = await this.catalog();
    } catch {
      tools = [];
    }
    const tool = tools.find((candidate) => candidate.name === original);
    const entry = this.state.choose(CALL_FAULTS, place, (candidate) => {
      switch (candidate.kind) {
        case 'stale_read': {
          const cached = this.state.reads.get(key);
          return this.isRead(original) && cached !== undefined && cached.epoch < this.state.writes;
        }
        case 'wrong_result_schema':
          return tool?.outputSchema !== undefined;
        default:
          return true;
      }
    });

    if (!entry) return this.forward(upstreamRequest, original, key);
    const random = this.state.random;
    switch (entry.kind) {
      case 'jsonrpc_error': {
        const code = random.pick(param<number[]>(entry, 'codes', [-32603]));
        const message = param<string | undefined>(entry, 'message', undefined) ?? ERROR_TEXT[code] ?? 'Server error';
        this.state.record(entry, place, `answered with JSON-RPC error ${code} (${message})`);
        return this.answerError(request.id, code, message);
      }
      case 'tool_error': {
        const message = random.pick(param<string[]>(entry, 'messages', [...DEFAULT_ERROR_MESSAGES]));
        this.state.record(entry, place, `answered isError: ${message}`);
        return this.answer(request.id, { content: [{ type: 'text', text: message }], isError: true });
      }
      case 'transient': {
        const total = param(entry, 'failures', 1);
        this.state.transient.set(key, { entry, remaining: total - 1, total });
        this.state.record(entry, place, `attempt 1 of ${total} fails`);
        return this.failTransient(request.id, entry);
      }
      case 'timeout': {
        const reaches = param(entry, 'reaches_server', false);
        this.state.record(entry, place, reaches ? 'executed, but the answer is never delivered; the client times out and cancels' : 'never answered; the client times out and cancels');
        if (reaches) return this.forward(upstreamRequest, original, key, () => null);
        this.held.add(request.id);
        return;
      }
      case 'latency': {
        const ms = param(entry, 'ms', 50);
        this.state.record(entry, place, `answered after an extra ${ms} ms`);
        return this.forward(upstreamRequest, original, key, (response) =>
          new Promise((resolve) => {
            const timer = setTimeout(() => {
              this.timers.delete(timer);
              resolve(response);
            }, ms);
            this.timers.add(timer);
          }),
        );
      }
      case 'wrong_result_schema': {
        const mutationRandom = substream(random.hex(16), 'wrong_result_schema');
        return this.forward(upstreamRequest, original, key, (response) => {
          if (!('result' in response) || !isJsonObject(response.result)) {
            this.state.record(entry, place, 'the server answered with an error; nothing to spoil');
            return response;
          }
          const mutation = violateOutputSchema(response.result as JsonObject, tool?.outputSchema as JsonObject | undefined, mutationRandom);
          this.state.record(entry, place, mutation.detail);
          return { ...response, result: mutation.result } as Message;
        });
      }
      case 'truncated_result': {
        const mode = param<string>(entry, 'mode', 'cut');
        return this.forward(upstreamRequest, original, key, (response) => {
          if (!('result' in response) || !isJsonObject(response.result)) {
            this.state.record(entry, place, 'the server answered with an error; nothing to truncate');
            return response;
          }
          const mutation =
            mode === 'oversize'
              ? oversize(response.result as JsonObject, param(entry, 'oversize_bytes', 1_048_576))
              : cutText(response.result as JsonObject, param(entry, 'keep_fraction', 0.5));
          this.state.record(entry, place, mutation.detail);
          return { ...response, result: mutation.result } as Message;
        });
      }
      case 'tool_renamed': {
        const removed = param(entry, 'remove', false);
        const renamed = removed ? null : this.unusedName(param(entry, 'new_name', `${original}_v2`), tools);
        this.state.renamed.set(original, renamed);
        this.state.record(entry, place, `${removed ? 'removed' : `renamed to ${renamed}`}; notifications/tools/list_changed sent; this call answered "Unknown tool"`, {
          renamed_to: renamed,
        });
        this.toClient({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as Message);
        return this.answerError(request.id, -32602, `Unknown tool: ${name}`);
      }
      case 'disconnect': {
        const reaches = param(entry, 'reaches_server', false);
        this.state.record(entry, place, reaches ? 'executed, then the connection closed before the answer' : 'the connection closed before the call reached the server');
        if (reaches) {
          return this.forward(upstreamRequest, original, key, () => {
            void this.disconnect();
            return null;
          });
        }
        return this.disconnect();
      }
      case 'stale_read': {
        const cached = this.state.reads.get(key)!;
        const behind = this.state.writes - cached.epoch;
        this.state.record(entry, place, `answered with the result from before the last ${behind === 1 ? 'write' : `${behind} writes`}`);
        return this.answer(request.id, cached.result);
      }
      default:
        return this.forward(upstreamRequest, original, key);
    }
  }

  private failTransient(id: Id, entry: FaultEntry): void {
    if (param<string>(entry, 'as', 'tool_error') === 'jsonrpc_error') {
      const code = param(entry, 'code', -32603);
      return this.answerError(id, code, param(entry, 'message', ERROR_TEXT[code] ?? 'Server error'));
    }
    this.answer(id, { content: [{ type: 'text', text: param(entry, 'message', 'temporary failure, please retry') }], isError: true });
  }

  /** Forwards a call upstream; keeps the read cache and write count; lets `after` change the answer. */
  private forward(request: Message, tool: string, key: string, after?: AfterResponse): void {
    this.forwarded.set(request.id, (response) => {
      if ('result' in response && isJsonObject(response.result) && !response.result.isError) {
        if (this.isRead(tool)) this.state.reads.set(key, { result: response.result as JsonObject, epoch: this.state.writes });
        else this.state.writes++;
      }
      return after ? after(response) : response;
    });
    this.toServer(request);
  }

  /** A new name that no tool has yet, so a rename never hides a real tool. */
  private unusedName(wanted: string, tools: readonly Tool[]): string {
    const taken = new Set(this.visible([...tools]).map((tool) => tool.name));
    let name = wanted;
    for (let suffix = 2; taken.has(name); suffix++) name = `${wanted}_${suffix}`;
    return name;
  }

  private async disconnect(): Promise<void> {
    await this.close('fault');
  }
}
