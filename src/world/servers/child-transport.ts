// Owns talking MCP over stdio to a third-party server started as a child
// process in its own process group: the child's whole environment is given by
// the caller (already stripped of secrets), stdout must carry only JSON-RPC
// lines (anything else is a server fault that ends the session), and close()
// kills the whole group, so nothing the server started outlives the episode.
// The SDK's StdioClientTransport shares our process group, kills only the
// direct child and stays open after garbage on stdout (docs/server-worlds.md,
// "Sandbox and child process"), which is why this exists.

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ChildEnvironment } from '../../core/child-environment.js';
import type { ServerFault } from '../server-fault.js';

export interface ChildTransportOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: ChildEnvironment;
  /** How long close() waits for a clean exit after ending stdin before killing the group. */
  graceMs?: number;
  /** Called with each stderr chunk (servers print banners there). */
  onStderr?: (text: string) => void;
  /** Called once with the first fault the child caused. */
  onServerFault?: (fault: ServerFault) => void;
}

export class ChildTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private closing = false;
  private closedOnce = false;
  private faulted = false;
  private exited: Promise<void> = Promise.resolve();
  /** Our own liveness pings, answered by the child and never passed up. */
  private readonly pings = new Map<string, () => void>();
  private pingCount = 0;

  constructor(private readonly options: ChildTransportOptions) {}

  /** The child's pid, which is also its process group id. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('ChildTransport already started');
    const child = spawn(this.options.command, [...this.options.args], {
      cwd: this.options.cwd,
      env: this.options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      shell: false,
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) => {
        this.fault({ kind: 'spawn_failed', detail: error.message });
        reject(error);
      });
    });
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    child.stderr!.on('data', (chunk: Buffer) => this.options.onStderr?.(chunk.toString('utf8')));
    child.stdin!.on('error', (error) => this.onerror?.(error));
    child.once('close', (code, signal) => {
      if (!this.closing) this.fault({ kind: 'crashed', detail: `the server exited (${signal ?? `code ${code}`}) during the session` });
      void this.close();
    });
  }

  private read(chunk: Buffer): void {
    // After garbage (or once closing) nothing more from this child is believed.
    if (this.faulted || this.closing) return;
    this.buffer.append(chunk);
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        this.fault({ kind: 'garbage_output', detail: `the server wrote something other than JSON-RPC to stdout: ${(error as Error).message}` });
        void this.close();
        return;
      }
      if (message === null) return;
      const id = (message as { id?: unknown }).id;
      if (typeof id === 'string' && this.pings.has(id) && !('method' in message)) {
        this.pings.get(id)!();
        continue;
      }
      this.onmessage?.(message);
    }
  }

  private fault(fault: ServerFault): void {
    if (this.faulted) return;
    this.faulted = true;
    this.options.onServerFault?.(fault);
    this.onerror?.(new Error(`${fault.kind}: ${fault.detail}`));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closing) throw new Error('not connected');
    await new Promise<void>((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Whether the child still answers: a JSON-RPC ping of our own, outside the
   * session's ids, within `timeoutMs`. After a tool call timed out this tells
   * a slow tool (the child answers) from a hung child (it does not).
   */
  async responsive(timeoutMs: number): Promise<boolean> {
    if (!this.child || this.closing) return false;
    const id = `episode-factory-liveness-${++this.pingCount}`;
    const answered = new Promise<boolean>((resolve) => {
      this.pings.set(id, () => resolve(true));
      setTimeout(() => resolve(false), timeoutMs).unref();
    });
    try {
      await this.send({ jsonrpc: '2.0', id, method: 'ping' } as JSONRPCMessage);
    } catch {
      this.pings.delete(id);
      return false;
    }
    const alive = await answered;
    this.pings.delete(id);
    return alive;
  }

  /**
   * A kept child waiting between episodes must not keep the process alive on
   * its own: unref'd, it dies with us (its stdin closes) instead of holding
   * the exit. Ref'd again while an episode uses it.
   */
  setReferenced(referenced: boolean): void {
    const child = this.child;
    if (!child) return;
    const handles = [child, child.stdin, child.stdout, child.stderr] as Array<{ ref?: () => void; unref?: () => void } | null>;
    for (const handle of handles) (referenced ? handle?.ref : handle?.unref)?.call(handle);
  }

  get closed(): boolean {
    return this.closing;
  }

  /** Records a fault this transport could not see itself (a hang the session found), once. */
  report(fault: ServerFault): void {
    this.fault(fault);
  }

  async close(): Promise<void> {
    if (this.closedOnce) return;
    this.closedOnce = true;
    this.closing = true;
    const child = this.child;
    if (child) {
      // A kept child idles unref'd; its exit must hold the loop while we wait for it.
      this.setReferenced(true);
      child.stdin?.end();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, this.options.graceMs ?? 200).unref());
      await Promise.race([this.exited, grace]);
      killGroup(child.pid);
      await this.exited;
      // Killed grandchildren linger as zombies until their new parent reaps them.
      if (child.pid !== undefined && !(await groupGone(child.pid, 1000))) {
        this.fault({ kind: 'leftover_processes', detail: `processes of group ${child.pid} survived SIGKILL` });
      }
    }
    this.buffer.clear();
    this.onclose?.();
  }
}

/** SIGKILL to every process in the group led by `pid`; a group already gone is fine. */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Waits up to `timeoutMs` for the group led by `pid` to be empty. */
export async function groupGone(pid: number, timeoutMs: number): Promise<boolean> {
  for (let waited = 0; groupAlive(pid); waited += 10) {
    if (waited >= timeoutMs) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/**
 * Whether any process of the group led by `pid` is still alive. On Linux a
 * killed process stays in its group as a zombie until its new parent reaps it
 * (PID 1 may take a second), so /proc is read and zombies do not count.
 */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
  } catch {
    return false;
  }
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  for (const entry of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pid && fields[0] !== 'Z') return true;
  }
  return false;
}
