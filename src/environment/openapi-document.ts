// Owns `GET /openapi.json`: every HTTP route `env serve` answers, the native
// API's and OpenEnv's, as an OpenAPI 3.1 document. OpenEnv's validator reads
// its info.version and its paths (an OpenEnv server in simulation mode lists
// /reset, /step and /state together); the WebSocket /ws is described in the
// info, since OpenAPI has no place for it.

import type { JsonObject } from '../core/json-value.js';
import { FACTORY_VERSION } from '../core/package-paths.js';
import type { Lane } from '../lanes/lane.js';
import { schemasOf } from './openenv-protocol.js';

/** The version of the HTTP API this document describes: 1.x is the profile OpenEnv's validator names openenv-http/1.x. */
export const API_VERSION = '1.0.0';

const json = (schema: JsonObject = { type: 'object' }): JsonObject => ({ content: { 'application/json': { schema } } });
const answer = (description: string, schema?: JsonObject): JsonObject => ({ description, ...json(schema) });
const error = answer('a refusal: {"error": {"code", "message", "field"?, "fix"?}}');
const episodeId = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

export function openApiDocument(lane: Lane): JsonObject {
  const schemas = schemasOf();
  return {
    openapi: '3.1.0',
    info: {
      title: `episode-factory env serve: ${lane.name}`,
      version: API_VERSION,
      description:
        `The tasks of lane ${lane.name} as an environment for online training (episode-factory ${FACTORY_VERSION}). ` +
        "Native API: /reset, /step, /episodes. OpenEnv's: the WebSocket /ws (frames reset, step, state, close, mcp), POST /mcp (JSON-RPC), /health, /metadata, /schema, /state. " +
        'See docs/environment.md.',
    },
    paths: {
      '/': { get: { summary: 'The lane: tasks, seeds, limits, episodes open', responses: { 200: answer('the lane and the server') } } },
      '/tasks': { get: { summary: 'The same as GET /', responses: { 200: answer('the lane and the server') } } },
      '/reset': {
        post: {
          summary: 'Opens an episode on a fresh world: {task, seed, agent}',
          requestBody: json({ type: 'object', properties: { task: { type: 'string' }, seed: { type: 'integer', minimum: 0 }, agent: {} } }),
          responses: { 200: answer('the episode: episode_id, messages, tools, done'), 400: error, 503: error },
        },
      },
      '/step': {
        post: {
          summary: 'One assistant message in an episode: {episode_id, message}',
          requestBody: json({ type: 'object', required: ['episode_id', 'message'], properties: { episode_id: { type: 'string' }, message: { type: 'object' } } }),
          responses: { 200: answer('what the tools and the user said back; done, and the reward when it is'), 400: error, 404: error, 409: error },
        },
      },
      '/state': { get: { summary: "OpenEnv's state of a fresh session (episodes live on /ws): {episode_id: null, step_count: 0}", responses: { 200: answer('the state', schemas.state as JsonObject) } } },
      '/episodes': { get: { summary: 'Every open episode', responses: { 200: answer('{episodes: [...]}') } } },
      '/episodes/{id}': {
        get: { summary: 'An episode: its state and conversation', parameters: [episodeId], responses: { 200: answer('the episode'), 404: error } },
        delete: { summary: 'Closes an episode and disposes its world', parameters: [episodeId], responses: { 200: answer('{episode_id, closed: true}'), 404: error } },
      },
      '/episodes/{id}/record': {
        post: { summary: 'Keeps a finished episode as a record, replay-verified on a fresh world', parameters: [episodeId], responses: { 200: answer('the record and its line'), 409: error, 422: error } },
      },
      '/health': { get: { summary: 'OpenEnv: {"status": "healthy"}', responses: { 200: answer('healthy') } } },
      '/metadata': { get: { summary: 'OpenEnv: name, description, version', responses: { 200: answer('the environment metadata') } } },
      '/schema': { get: { summary: 'OpenEnv: the action, observation and state as JSON Schemas', responses: { 200: answer('{action, observation, state}') } } },
      '/mcp': {
        post: {
          summary: 'OpenEnv: JSON-RPC 2.0 (tools/list, tools/call, openenv/session/create, openenv/session/close); always HTTP 200',
          requestBody: json({ type: 'object', properties: { jsonrpc: { const: '2.0' }, method: { type: 'string' }, params: { type: 'object' }, id: {} } }),
          responses: { 200: answer('a JSON-RPC response, result or error') },
        },
      },
      '/openapi.json': { get: { summary: 'This document', responses: { 200: answer('OpenAPI 3.1') } } },
    },
  };
}
