// A raw stdio MCP session with a child process for the hostile wire tests:
// lines written as they are (not through an SDK client, which would refuse to
// send them), answers collected by id, the child under a hard kill timer so a
// session that stalls fails its test instead of hanging the suite.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export interface Answer {
  jsonrpc: string;
  id?: string | number | null;
  result?: any;
  error?: { code: number; message: string };
}

export interface StdioSession {
  child: ChildProcessWithoutNullStreams;
  /** Writes one line (a newline is added). */
  send(line: string): void;
  /** The first answer `matches` accepts, waiting at most `limitMs`; rejects naming what did arrive. */
  answer(matches: (answer: Answer) => boolean, limitMs?: number): Promise<Answer>;
  /** Every answer so far. */
  answers(): Answer[];
  stderr(): string;
  /** Closes stdin and waits for the exit (killed after `limitMs`): exit code, or the signal's name. */
  end(limitMs?: number): Promise<number | string | null>;
  /** Whether the child is still running. */
  running(): boolean;
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile-wire', version: '1' } },
};

/** Starts `args` with node; the child is killed with SIGKILL after `hardLimitMs` whatever happens. */
export function startStdioSession(args: string[], env: NodeJS.ProcessEnv, hardLimitMs: number): StdioSession {
  const child = spawn(process.execPath, args, { env });
  const killer = setTimeout(() => child.kill('SIGKILL'), hardLimitMs);
  child.once('exit', () => clearTimeout(killer));
  // A child that stopped reading must fail the test, not crash it with EPIPE.
  child.stdin.on('error', () => undefined);
  const received: Answer[] = [];
  const waiters = new Set<() => void>();
  let pending = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    pending += String(chunk);
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.trim() !== '') received.push(JSON.parse(line) as Answer);
    }
    for (const waiter of waiters) waiter();
  });
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return {
    child,
    send: (line) => void child.stdin.write(line + '\n'),
    answers: () => [...received],
    stderr: () => stderr,
    running: () => child.exitCode === null && child.signalCode === null,
    answer(matches, limitMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(matches);
          if (found === undefined) return false;
          done();
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no such answer within ${limitMs} ms; answers: ${JSON.stringify(received).slice(0, 2000)}; stderr: ${stderr.slice(-2000)}`));
        }, limitMs);
        const onExit = () => {
          if (check()) return;
          done();
          reject(new Error(`the child exited before answering; answers: ${JSON.stringify(received).slice(0, 2000)}; stderr: ${stderr.slice(-2000)}`));
        };
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', onExit);
        };
        if (check()) return;
        waiters.add(check);
        if (child.exitCode !== null || child.signalCode !== null) return onExit();
        child.once('exit', onExit);
      });
    },
    end(limitMs = 20_000) {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
      return exited.finally(() => clearTimeout(timer));
    },
  };
}

/** A tools/call whose argument nests `depth` objects deep, as text (building it as a value and stringifying would overflow the stack). */
export function deepCall(id: number, tool: string, depth: number): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{"x":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}}`;
}

/** A tools/call of `bytes` bytes or more, with its id last, where the SDK's clients put it. */
export function oversizedCall(id: number, tool: string, bytes: number): string {
  return `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"${tool}","arguments":{"text":"${'x'.repeat(bytes)}"}},"id":${id}}`;
}

/** A session that has done the MCP handshake: initialize answered by `serverName`, then notifications/initialized. */
export async function startInitializedSession(args: string[], env: NodeJS.ProcessEnv, serverName: string, hardLimitMs = 110_000): Promise<StdioSession> {
  const session = startStdioSession(args, env, hardLimitMs);
  session.send(JSON.stringify(INITIALIZE));
  const initialized = await session.answer((answer) => answer.id === 1);
  if (initialized.result?.serverInfo?.name !== serverName) throw new Error(`initialize was answered by ${JSON.stringify(initialized).slice(0, 300)}, not ${serverName}`);
  session.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return session;
}
