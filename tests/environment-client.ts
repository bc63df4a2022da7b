// Test helpers for `env serve`: JSON over real HTTP, and an agent that plays a
// task's own solution. The solution is the scripted policy's, taken from the
// record generate would make for the same (task, seed): its assistant turns,
// in OpenAI chat shape, are what a client sends step by step.

import { after } from 'node:test';
import { startEnvironmentServer, type EnvironmentServer, type EnvironmentServerOptions } from '../src/environment/environment-server.js';
import type { Lane } from '../src/lanes/lane.js';
import { findTask } from '../src/lanes/lane.js';
import { policyFactoryFor } from '../src/selection/scripted-policy-factory.js';
import { resolveProducedAt } from '../src/generation/produced-at.js';
import type { EpisodeRecord } from '../src/records/episode-record.js';
import { produceEpisode } from '../src/verify/episode-production.js';
import { recordedActions } from '../src/verify/replay-policy.js';

export interface Answer {
  status: number;
  body: any;
}

export async function request(base: string, method: string, path: string, body?: unknown, raw?: string): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    ...(body !== undefined || raw !== undefined ? { body: raw ?? JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

export const post = (base: string, path: string, body?: unknown) => request(base, 'POST', path, body);
export const get = (base: string, path: string) => request(base, 'GET', path);

export interface ChatMessage {
  role: 'assistant';
  content: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
}

/** The record generate's scripted policy makes for (task, seed), before replay. */
export async function generatedRecord(lane: Lane, taskId: string, seed: number): Promise<EpisodeRecord> {
  const task = findTask(lane, taskId);
  if (!task) throw new Error(`no task ${taskId}`);
  return produceEpisode({ lane, task, seed }, policyFactoryFor(lane), { producedAt: resolveProducedAt(lane) });
}

/** The assistant turns of a record, as a client would send them (with ids of its own). */
export function assistantTurns(record: EpisodeRecord): ChatMessage[] {
  return recordedActions(record.messages).map((action, turn) => {
    if (action.kind === 'final_text') return { role: 'assistant', content: action.text };
    if (action.kind === 'malformed_tool_call') throw new Error('a scripted solution never sends a malformed call');
    const calls = action.kind === 'tool_call' ? [{ name: action.name, arguments: action.arguments }] : action.calls;
    return {
      role: 'assistant',
      content: action.text ?? '',
      tool_calls: calls.map((call, index) => ({ id: `client-${turn}-${index}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
    };
  });
}

/** Resets, sends every turn, and returns the reset answer and each step's. */
export async function drive(base: string, reset: Record<string, unknown>, turns: readonly ChatMessage[]): Promise<{ reset: Answer; steps: Answer[] }> {
  const opened = await post(base, '/reset', reset);
  if (opened.status !== 200) throw new Error(`reset answered ${opened.status}: ${JSON.stringify(opened.body)}`);
  const steps: Answer[] = [];
  for (const message of turns) {
    const answer = await post(base, '/step', { episode_id: opened.body.episode_id, message });
    steps.push(answer);
    if (answer.status !== 200 || answer.body.done) break;
  }
  return { reset: opened, steps };
}

/** `serve(lane, options)` for a test file: starts `env serve` in process, and every server it started is closed after the file. */
export function environmentServers(): (lane: Lane, options?: Partial<EnvironmentServerOptions>) => Promise<EnvironmentServer> {
  const servers: EnvironmentServer[] = [];
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });
  return async (lane, options = {}) => {
    const server = await startEnvironmentServer({ lane, ...options });
    servers.push(server);
    return server;
  };
}
