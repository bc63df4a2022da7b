// Owns how a world names itself in a record's provenance: its own name and
// version, how it was served, and the exact MCP SDK version that served it.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { JsonObject } from '../core/json-value.js';
import type { World } from './world-contract.js';

let sdkVersion: string | undefined;

export function mcpSdkVersion(): string {
  if (sdkVersion === undefined) {
    let directory = dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/sdk/server/index.js'));
    sdkVersion = 'unknown';
    while (directory !== dirname(directory)) {
      const manifest = join(directory, 'package.json');
      if (existsSync(manifest)) {
        const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
        if (parsed.name === '@modelcontextprotocol/sdk' && parsed.version) {
          sdkVersion = parsed.version;
          break;
        }
      }
      directory = dirname(directory);
    }
  }
  return sdkVersion;
}

export function worldActor(world: World<any>, transport: string): JsonObject {
  return {
    role: 'world',
    kind: 'mcp-server',
    name: world.name,
    version: world.version,
    transport,
    mcp_sdk: `@modelcontextprotocol/sdk@${mcpSdkVersion()}`,
  };
}
