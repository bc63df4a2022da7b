// Runs one CLI command in a child process (bench/peak-rss-run.ts) and reads
// back its peak resident set size and wall time: what every memory figure of
// the bench is.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { childEnvironment } from '../src/core/child-environment.js';

const REPO = new URL('../', import.meta.url).pathname;

export interface PeakRun {
  status: number;
  max_rss_bytes: number;
  wall_seconds: number;
}

export function runPeakRss(args: string[], cwd = REPO): Promise<PeakRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'bench', 'peak-rss-run.ts'), ...args], { cwd, env: childEnvironment(process.env).env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.once('error', reject);
    child.once('close', () => {
      const match = /BENCH_RESULT (.*)/.exec(stderr);
      if (!match) return reject(new Error(`episode-factory ${args.join(' ')} did not finish: ${stderr.slice(-2000)}`));
      resolve(JSON.parse(match[1]!) as PeakRun);
    });
  });
}
