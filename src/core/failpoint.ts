// Owns the named crash points a test can arm with EPISODE_FACTORY_FAILPOINT=<name>
// to kill the process (SIGKILL: no clean-up runs) at one exact step, the only
// way to prove that a crash between two steps of publishing loses nothing.
// Unarmed, a failpoint does nothing; nothing that reaches a record reads it.

export function failpoint(name: string): void {
  if (process.env.EPISODE_FACTORY_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}
