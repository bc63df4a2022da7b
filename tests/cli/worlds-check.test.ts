// `worlds check` on the command line: one line per check with its mark, a
// closing tally, --json for scripts, exit 1 when a check fails (a world
// registered by this test whose snapshot counts its own probes) and 2 for an
// unknown world, said on one line with the worlds there are.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { main } from '../../src/cli/main.js';
import type { Streams } from '../../src/cli/output.js';
import { registerWorld } from '../../src/world/world-registry.js';
import { type CliResult, REPO_ROOT, runCli } from '../helpers.js';

async function runMain(...args: string[]): Promise<CliResult> {
  const captured = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') => ({ write: (chunk: string) => ((captured[name] += chunk), true) }) as unknown as Streams['stdout'];
  const status = await main(['node', 'episode-factory', ...args], { stdout: stream('stdout'), stderr: stream('stderr') });
  return { status, ...captured };
}

describe('worlds check', () => {
  it('prints one marked line per check of a scripted world and exits 0', async () => {
    const result = await runMain('worlds', 'check', 'tasks');
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'tasks');
    assert.deepEqual(lines.slice(1, 8).map((line) => line.trim().split(/\s+/).slice(0, 2).join(' ')), ['✓ seed', '✓ probe', '✓ catalog', '– sandbox', '– cleanup', '✓ faults', '✓ replay']);
    assert.match(lines[4]!, /scripted world .* no sandbox/);
    assert.equal(lines.at(-1), '1 world checked: all conform');
  });

  it('prints the report as JSON with --json', async () => {
    const result = await runMain('worlds', 'check', 'issues', '--json');
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(result.stdout);
    assert.equal(report.world, 'issues');
    assert.equal(report.kind, 'scripted');
    assert.equal(report.passed, true);
    assert.deepEqual(report.checks.map((check: { id: string }) => check.id), ['seed', 'probe', 'catalog', 'sandbox', 'cleanup', 'faults', 'replay']);
  });

  it('exits 1 when a check fails', async () => {
    registerWorld({
      name: 'counting-probe',
      version: '0.0.1',
      description: 'a world whose snapshot changes each time it is taken',
      tools: [{ name: 'token', description: 'The token.', inputSchema: { type: 'object', properties: {} } }],
      configSchema: { type: 'object' },
      init: (random) => ({ token: random.hex(8), probes: 0 }),
      call: (state: { token: string }) => ({ ok: true, value: { token: state.token } }),
      snapshot: (state: { token: string; probes: number }) => ({ token: state.token, probes: ++state.probes }),
    });
    const result = await runMain('worlds', 'check', 'counting-probe');
    assert.equal(result.status, 1, result.stdout);
    assert.match(result.stdout, /✗ probe .*nobody touched differs/);
    assert.match(result.stdout, /1 world checked: 1 failed \(counting-probe\)/);
  });

  it('exits 2 for an unknown world, naming the worlds there are', () => {
    const result = runCli(REPO_ROOT, 'worlds', 'check', 'nowhere');
    assert.equal(result.status, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /unknown world "nowhere" — fix: use one of: calendar, files, filesystem-server/);
  });
});
