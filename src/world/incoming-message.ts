// Owns reading one JSON-RPC message a client sent over the wire (a stdio line,
// an HTTP body) before any of it reaches the MCP SDK or the fault layer: the
// size and nesting limits, strict UTF-8, the parse, and the JSON-RPC shape. A
// message that fails is not dropped in silence: it becomes a refusal, the
// JSON-RPC error to answer it with (-32700 when it is not JSON, -32600 when it
// is past a limit or not a JSON-RPC message), carrying the request's id when
// one can be read, so the client is never left waiting for an answer.

import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson } from '../core/bounded-json.js';
import { isJsonObject } from '../core/json-value.js';
import { scanJsonRpcId, type JsonRpcId } from '../core/json-rpc-id-scanner.js';
import { decodeUtf8, InvalidUtf8Error } from '../core/utf8-text.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** A message that will not be handled, and how to answer it. */
export interface Refusal {
  code: typeof PARSE_ERROR | typeof INVALID_REQUEST;
  /** Names the limit or what is wrong; the client reads it. */
  message: string;
  /** The request's id when one could be read; null otherwise, as JSON-RPC answers a request whose id is unknown. */
  id: JsonRpcId | null;
  /**
   * False for what looks like a response (no method, a result or an error):
   * the client is not waiting on an answer to it, and one with its id would
   * be taken for an answer to its own request of that id.
   */
  answer: boolean;
}

export type Incoming = { message: JSONRPCMessage } | { refusal: Refusal };

/** The JSON-RPC error answering a refusal. */
export function refusalAnswer(refusal: Refusal): { jsonrpc: '2.0'; id: JsonRpcId | null; error: { code: number; message: string } } {
  return { jsonrpc: '2.0', id: refusal.id, error: { code: refusal.code, message: refusal.message } };
}

/**
 * The refusal of a message past `maximum` bytes, which was never held whole:
 * its id is what a scan found as it passed, if anything. `found` is its whole
 * size, or with `atLeast` the bytes read before it was refused.
 */
export function oversizedRefusal(what: string, maximum: number, found: number, id: JsonRpcId | null, atLeast = false): Refusal {
  const size = atLeast ? `more than ${maximum} bytes` : `${found} bytes`;
  return {
    code: INVALID_REQUEST,
    message: `Invalid Request: ${what} is too large (${size}, over the limit of ${maximum} bytes); send a smaller one`,
    id,
    answer: true,
  };
}

/**
 * Reads one message from its bytes. `what` names it in errors ("the message",
 * "the request body"). The size limit is the caller's to check: it must not
 * hold more than that in the first place.
 */
export function readIncomingMessage(bytes: Uint8Array, what: string): Incoming {
  const value = parseIncoming(bytes, what);
  if ('refusal' in value) return value;
  return checkShape(value.value, what);
}

/** Reads a body that may be one message or a batch (an array of messages): every element is checked; the first bad one refuses the whole body. */
export function readIncomingBody(bytes: Uint8Array, what: string): { messages: JSONRPCMessage[]; value: unknown } | { refusal: Refusal } {
  const parsed = parseIncoming(bytes, what);
  if ('refusal' in parsed) return parsed;
  const elements = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  if (elements.length === 0) return { refusal: { code: INVALID_REQUEST, message: `Invalid Request: ${what} is an empty batch`, id: null, answer: true } };
  const messages: JSONRPCMessage[] = [];
  for (const element of elements) {
    const checked = checkShape(element, Array.isArray(parsed.value) ? `a message in ${what}` : what);
    if ('refusal' in checked) return checked;
    messages.push(checked.message);
  }
  return { messages, value: parsed.value };
}

function parseIncoming(bytes: Uint8Array, what: string): { value: unknown } | { refusal: Refusal } {
  let text: string;
  try {
    text = decodeUtf8(bytes);
  } catch (error) {
    if (!(error instanceof InvalidUtf8Error)) throw error;
    return { refusal: { code: PARSE_ERROR, message: `Parse error: ${what} is not UTF-8 (${error.message})`, id: scanJsonRpcId(bytes), answer: true } };
  }
  try {
    return { value: parseBoundedJson(text, { maxDepth: MAX_JSON_DEPTH, where: what }) };
  } catch (error) {
    if (error instanceof JsonLimitError) {
      return { refusal: { code: INVALID_REQUEST, message: `Invalid Request: ${error.message}; send a flatter message`, id: scanJsonRpcId(bytes), answer: true } };
    }
    return { refusal: { code: PARSE_ERROR, message: `Parse error: ${what} is not JSON (${(error as Error).message})`, id: scanJsonRpcId(bytes), answer: true } };
  }
}

/** The JSON-RPC 2.0 shape MCP accepts, with the first thing wrong named plainly (the SDK's own schema is the final word). */
function checkShape(value: unknown, what: string): Incoming {
  const refuse = (reason: string, answer = true): Incoming => ({
    refusal: { code: INVALID_REQUEST, message: `Invalid Request: ${reason}`, id: readableId(value), answer },
  });
  if (Array.isArray(value)) return refuse(`${what} is an array; send one JSON-RPC message object per line`);
  if (!isJsonObject(value)) return refuse(`${what} is ${value === null ? 'null' : `a ${typeof value}`}, not a JSON-RPC message object`);
  const looksLikeResponse = !('method' in value) && ('result' in value || 'error' in value);
  if (value.jsonrpc !== '2.0') return refuse('"jsonrpc" must be "2.0"', !looksLikeResponse);
  if ('id' in value && !(typeof value.id === 'string' || Number.isInteger(value.id))) {
    return refuse('"id" must be a string or a whole number', !looksLikeResponse);
  }
  if ('method' in value) {
    if (typeof value.method !== 'string') return refuse('"method" must be a string');
    if ('params' in value && !isJsonObject(value.params)) return refuse('"params" must be an object');
  } else if (!looksLikeResponse) {
    return refuse('no "method" (a request or a notification) and no "result" or "error" (a response)');
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return refuse(`${what} does not fit JSON-RPC 2.0 as MCP uses it (${where}${issue?.message ?? 'invalid'})`, !looksLikeResponse);
  }
  return { message: parsed.data };
}

function readableId(value: unknown): JsonRpcId | null {
  if (!isJsonObject(value)) return null;
  const id = value.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** One line for the operator: what was refused and how it was answered. */
export function describeRefusal(refusal: Refusal): string {
  const answered = refusal.answer ? `answered ${refusal.code} (id ${JSON.stringify(refusal.id)})` : 'not answered: it looks like a response';
  return `refused a message from the client, ${answered}: ${refusal.message}`;
}
