// Owns the contract of a model-family codec: the one place a family's tool
// syntax lives. A codec renders a conversation and its tools into the exact
// prompt text the family was trained on (for raw generation), and parses one
// assistant turn of that family's text into exactly one action: FinalText,
// ToolCall (one call), ToolCalls (several calls in the turn) or
// MalformedToolCall. The runner's loop knows no family syntax.

import type { Message, ToolDescriptor } from '../../core/conversation.js';
import type { Action } from '../model-action.js';

export type CodecName = 'hermes' | 'llama3' | 'mistral';

export interface ModelCodec {
  readonly name: CodecName;
  /** Ollama `details.family` values this codec serves (e.g. "qwen2"). */
  readonly families: readonly string[];
  /** Stop sequences for raw generation: where the family ends an assistant turn. */
  readonly stop: readonly string[];
  /** What `render` appends after the conversation to open the assistant's turn ("" when the family needs nothing). */
  readonly generationPrompt: string;
  /**
   * The whole prompt for raw generation: the system message with the tools,
   * every message so far, and the opening of the assistant's next turn.
   */
  render(messages: readonly Message[], tools: readonly ToolDescriptor[]): string;
  /** One assistant turn, as the model wrote it, into exactly one action. */
  parse(text: string): Action;
}

/** The conversation as the family's template writes it, without opening a new assistant turn: training text. */
export function renderTranscript(codec: ModelCodec, messages: readonly Message[], tools: readonly ToolDescriptor[]): string {
  const prompt = codec.render(messages, tools);
  if (!prompt.endsWith(codec.generationPrompt)) throw new Error(`${codec.name} render does not end with its generation prompt`);
  return prompt.slice(0, prompt.length - codec.generationPrompt.length);
}
