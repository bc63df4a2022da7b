// Owns running one of the experiment's Python programs (a trainer, the GGUF
// converter) as a child of the project's Python environment: the environment
// without secrets, PYTHONHASHSEED pinned, the lines it prints passed on as
// progress, and the last of them kept in a log beside its output, so a
// failure names the status, its last words and where the whole log is.

import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnvironment } from '../core/child-environment.js';
import { FactoryError } from '../core/errors.js';
import { PACKAGE_ROOT } from '../core/package-paths.js';

export const PYTHON_ENVIRONMENT = join(PACKAGE_ROOT, '.cache', 'python-loaders', 'bin', 'python');

export interface PythonJob {
  /** The script and its arguments. */
  args: string[];
  /** The interpreter (default: the project's environment, built by scripts/python-loaders.sh). */
  python?: string;
  /** Where train.log (the last 200 lines) is written. */
  logDir: string;
  /** What the program is, for the error: "the trainer", "the GGUF converter". */
  what: string;
  /** Lines starting with this are progress. */
  progressPrefix: string;
  onProgress?: (line: string) => void;
  env?: Record<string, string>;
}

export async function runPythonJob(job: PythonJob): Promise<void> {
  const python = job.python ?? PYTHON_ENVIRONMENT;
  if (!existsSync(python)) throw new FactoryError('model_unavailable', `no Python environment at ${python}`, { fix: 'run scripts/python-loaders.sh (CPU torch, transformers, TRL, gguf), or pass --python' });
  const log: string[] = [];
  const status = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(python, job.args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...childEnvironment(process.env).env, PYTHONHASHSEED: '0', ...job.env } });
    let pending = '';
    const take = (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        log.push(line);
        if (log.length > 200) log.shift();
        if (line.startsWith(job.progressPrefix)) job.onProgress?.(line);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => {
      if (pending !== '') log.push(pending);
      resolve(code);
    });
  });
  const logPath = join(job.logDir, 'train.log');
  writeFileSync(logPath, log.join('\n') + '\n', { flag: 'a' });
  if (status !== 0) {
    throw new FactoryError('training_failed', `${job.what} exited with status ${status}: ${log.filter((line) => line.trim() !== '').slice(-3).join(' | ')}`, {
      fix: `read ${logPath}; run scripts/python-loaders.sh if a Python module is missing`,
    });
  }
}
