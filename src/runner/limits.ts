// Owns the limits that bound an episode. The runner checks each one at an
// explicit boundary of its loop, never in the middle of a transition.

export interface Limits {
  /** Model turns (calls to the policy). */
  max_steps: number;
  /** Tool calls that reach a tool; rejected calls do not count. */
  max_tool_calls: number;
  /** Wall time for the whole episode. Not replayable by nature. */
  wall_time_ms: number;
  /** Per tool call; past it the client cancels the request. */
  tool_timeout_ms: number;
  /** Largest tool result, in UTF-8 bytes, reinjected into the conversation. */
  max_result_bytes: number;
  /** Replies a user simulator may give; past it the agent's text ends the episode. */
  max_user_turns: number;
}

export const DEFAULT_LIMITS: Limits = {
  max_steps: 16,
  max_tool_calls: 12,
  wall_time_ms: 60_000,
  tool_timeout_ms: 5_000,
  max_result_bytes: 32_768,
  max_user_turns: 4,
};
