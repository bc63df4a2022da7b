// Owns what one model turn amounts to for the agent loop: final text, one
// tool call, several calls in the turn, or a call that could not be read.
// A codec parses a family's text into one of these; the policy contract
// re-exports them, so the runner and the codecs speak the same shapes.

export interface FinalText {
  kind: 'final_text';
  text: string;
}

export interface ToolCallAction {
  kind: 'tool_call';
  name: string;
  /** Unvalidated: the runner checks it against the tool's schema before anything runs. */
  arguments: unknown;
  /** Text the model wrote alongside the call, if any. */
  text?: string;
  /** Wait this long before the call (a retry's backoff); traced, never recorded. */
  backoff_ms?: number;
}

/** One call of a turn that makes several. */
export interface ToolCallRequest {
  name: string;
  /** Unvalidated, as for a single call. */
  arguments: unknown;
}

/**
 * Several tool calls in one assistant turn (parallel calls). The runner
 * validates each on its own, executes the valid ones in the order given and
 * answers every one with its own tool message, matched by id. A turn of one
 * call is a ToolCallAction; policies never send a one-element list.
 */
export interface ToolCallsAction {
  kind: 'tool_calls';
  calls: ToolCallRequest[];
  text?: string;
  backoff_ms?: number;
}

export interface MalformedToolCall {
  kind: 'malformed_tool_call';
  /** The model's raw output. */
  raw: string;
  reason: string;
}

export type Action = FinalText | ToolCallAction | ToolCallsAction | MalformedToolCall;

/**
 * The action for a turn's calls (at least one): a single call stays a
 * ToolCallAction, shaped as it always was, because records of one-call turns
 * must keep their bytes; only two or more make a ToolCallsAction.
 */
export function callsAction(calls: readonly ToolCallRequest[], text?: string): ToolCallAction | ToolCallsAction {
  const said = text ? { text } : {};
  const [first] = calls;
  if (!first) throw new Error('callsAction needs at least one call');
  if (calls.length === 1) return { kind: 'tool_call', name: first.name, arguments: first.arguments, ...said };
  return { kind: 'tool_calls', calls: calls.map((call) => ({ name: call.name, arguments: call.arguments })), ...said };
}
