// `episode-factory serve --http 0` as a child for the tests that talk to it
// over HTTP: started under a hard kill timer, resolved with the URL it prints
// once it listens, and stopped with SIGTERM as a user would.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CLI } from './helpers.js';

export interface ServedHttp {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stderr: () => string;
}

/** `serve <args> --http 0`, killed after `limitMs` whatever happens, so a stall fails its test instead of hanging the suite. */
export function startServeHttp(args: readonly string[], limitMs = 110_000): Promise<ServedHttp> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args, '--http', '0']);
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  child.once('exit', () => clearTimeout(killer));
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
      const match = /at (http:\/\/127\.0\.0\.1:[0-9]+\/mcp)/.exec(stderr);
      if (match) resolve({ child, url: match[1]!, stderr: () => stderr });
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code} before listening: ${stderr}`)));
  });
}

/** SIGTERM, then its exit code, or the signal that ended it. */
export async function stopServe(child: ChildProcessWithoutNullStreams): Promise<number | string | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  child.kill('SIGTERM');
  return exited;
}
