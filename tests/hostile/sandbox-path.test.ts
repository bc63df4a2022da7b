// Hostile: a model trying to climb out of a server world's sandbox. Every
// escape attempt on the real server-filesystem (`..` out of /sandbox and past
// it, relative paths, `~`, trailing and doubled slashes, encoded forms, each
// tool that takes a path) is refused in words that name neither the real
// sandbox directory, nor its random suffix, nor TMPDIR, nor the kept child's
// directory; the answers are byte for byte the same under two different
// TMPDIRs (one shallow, one deep, one reached through a symlink) and with a
// kept or a fresh child. A record of such an episode, kept by `env serve`
// running with one TMPDIR, replays with `replay` running with another.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { filesystemServerWorld } from '../../src/world/servers/filesystem/filesystem-world.js';
import { closeKeptChildren } from '../../src/world/servers/server-pool.js';
import { post } from '../environment-client.js';
import { CLI, REPO_ROOT, runWithin, temporaryDirectory } from '../helpers.js';
import { sessionCalls, type Call } from '../world/servers/server-world-harness.js';

const S = '/sandbox';

/** Escape attempts whose text names nothing of this machine: their answers must be the same bytes anywhere. */
const ESCAPES: Call[] = [
  ['list_directory', { path: `${S}/..` }],
  ['list_directory', { path: `${S}/../` }],
  ['list_directory', { path: `${S}//..//` }],
  ['list_directory', { path: `${S}/./../.` }],
  ['list_directory', { path: `${S}/../..` }],
  ['list_directory', { path: `${S}/../../` }],
  ['list_directory', { path: `${S}/../../..` }],
  ['read_text_file', { path: `${S}/../../etc/passwd` }],
  ['read_text_file', { path: `${S}/../escape.txt` }],
  ['list_directory', { path: '..' }],
  ['list_directory', { path: '../..' }],
  ['read_text_file', { path: '../x' }],
  ['read_text_file', { path: '../../x' }],
  ['read_text_file', { path: '../../../../../../../../../../etc/passwd' }],
  ['list_directory', { path: '/' }],
  ['list_directory', { path: '/etc/../sandbox' }],
  ['list_directory', { path: '~' }],
  ['read_text_file', { path: '~/x' }],
  ['list_directory', { path: '~/..' }],
  ['list_directory', { path: '~/../..' }],
  ['list_directory', { path: `${S}/%2e%2e` }],
  ['list_directory', { path: `${S}/%2e%2e/%2e%2e` }],
  ['list_directory', { path: `file://${S}/..` }],
  ['list_directory', { path: 'C:/x' }],
  ['directory_tree', { path: `${S}/..` }],
  ['directory_tree', { path: `${S}/../..` }],
  ['search_files', { path: `${S}/..`, pattern: '**' }],
  ['search_files', { path: `${S}/../..`, pattern: '**' }],
  ['get_file_info', { path: `${S}/..` }],
  ['get_file_info', { path: `${S}/../..` }],
  ['list_directory_with_sizes', { path: `${S}/../..` }],
  ['read_file', { path: `${S}/../..` }],
  ['read_media_file', { path: `${S}/../../m.png` }],
  ['read_multiple_files', { paths: [`${S}/../../etc/passwd`, `${S}/..`, '../../y', `${S}/notes/todo.txt`] }],
  ['move_file', { source: `${S}/notes/todo.txt`, destination: `${S}/../../todo.txt` }],
  ['move_file', { source: `${S}/../../a`, destination: `${S}/b` }],
  ['write_file', { path: `${S}/../../w.txt`, content: 'x' }],
  ['create_directory', { path: `${S}/../../d` }],
  ['edit_file', { path: `${S}/../../e`, edits: [{ oldText: 'a', newText: 'b' }] }],
  ['write_file', { path: `${S}/climb.txt`, content: `${S}/../..` }],
  ['read_text_file', { path: `${S}/climb.txt` }],
  ['list_allowed_directories', {}],
];

/** Sets these variables for the length of `run` (TMPDIR is read afresh by os.tmpdir() on each call). */
async function withEnvironment<T>(variables: Record<string, string | undefined>, run: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(variables).map((key) => [key, process.env[key]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  apply(variables);
  try {
    return await run();
  } finally {
    apply(saved);
  }
}

/** The text of everything the model and the record would see of a session: every answer and both snapshots. */
function seen(session: { results: unknown; initial: unknown; final: unknown }): string {
  return JSON.stringify([session.results, session.initial, session.final]);
}

/** What a leak could name of this machine: TMPDIR as given and as resolved, every directory above it, and the world's directories in it. */
function machineForms(tmp: string): string[] {
  const forms = new Set<string>(['episode-factory-']);
  for (let directory of [tmp, realpathSync(tmp)]) {
    for (; directory !== dirname(directory); directory = dirname(directory)) forms.add(directory);
  }
  return [...forms];
}

describe('hostile: escaping a server world\'s sandbox', () => {
  after(closeKeptChildren);

  // Three TMPDIRs of different depths, one a symlink to a directory elsewhere (as /tmp is on some machines).
  const shallow = temporaryDirectory('ef-sp-');
  const deep = join(temporaryDirectory('ef-sandbox-path-deep-'), 'a', 'bb', 'ccc');
  mkdirSync(deep, { recursive: true });
  const linked = join(temporaryDirectory('ef-sp-link-'), 'tmp');
  const target = join(temporaryDirectory('ef-sp-target-'), 'private', 'tmp');
  mkdirSync(target, { recursive: true });
  symlinkSync(target, linked);

  const runs = [
    { tmp: shallow, fresh: undefined },
    { tmp: deep, fresh: '1' },
    { tmp: linked, fresh: undefined },
    { tmp: deep, fresh: undefined },
  ];

  it('answers every escape attempt without the real path, TMPDIR or the kept child\'s directory, the same bytes under every TMPDIR, kept child or fresh', { timeout: 180_000 }, async () => {
    const answers: string[] = [];
    for (const { tmp, fresh } of runs) {
      // The pool's directory is made in TMPDIR on first use: a new TMPDIR needs a new pool.
      await closeKeptChildren();
      const session = await withEnvironment({ TMPDIR: tmp, EPISODE_FACTORY_FRESH_SERVERS: fresh }, () => sessionCalls(filesystemServerWorld, 11, () => ({ calls: ESCAPES })));
      await closeKeptChildren();
      const text = seen(session);
      for (const form of machineForms(tmp)) assert.ok(!text.includes(form), `${form} (TMPDIR ${tmp}, ${fresh ? 'fresh' : 'kept'} child) in ${text.slice(Math.max(0, text.indexOf(form) - 200), text.indexOf(form) + 200)}`);
      const refused = session.results.filter(({ result }) => result.isError).length;
      assert.ok(refused >= 35, `the escapes are refused (${refused})`);
      answers.push(canonicalJson(session.results.map(({ result }) => result) as never));
    }
    for (const [index, answer] of answers.entries()) assert.equal(answer, answers[0], `run ${index} (${JSON.stringify(runs[index])}) answers as run 0`);
    // The model's view: `..` out of /sandbox is /, and / has no parent.
    const first = JSON.parse(answers[0]!) as Array<{ content: Array<{ text: string }> }>;
    assert.equal(first[0]!.content[0]!.text, 'Access denied - path outside allowed directories: / not in /sandbox');
    assert.equal(first[4]!.content[0]!.text, 'Access denied - path outside allowed directories: / not in /sandbox');
    assert.equal(first[7]!.content[0]!.text, 'Access denied - path outside allowed directories: /etc/passwd not in /sandbox');
    assert.equal(first[12]!.content[0]!.text, 'Access denied - path outside allowed directories: /x not in /sandbox');
    assert.equal(first[15]!.content[0]!.text, '[DIR] config\n[DIR] docs\n[DIR] notes\n[DIR] reports', '/etc/../sandbox is /sandbox');
    assert.equal(first[16]!.content[0]!.text, 'Access denied - path outside allowed directories: /home not in /sandbox');
  });

  it('answers paths that name this machine (TMPDIR, its parent, the real sandbox) without adding anything of it', { timeout: 120_000 }, async () => {
    for (const { tmp, fresh } of runs.slice(0, 3)) {
      await closeKeptChildren();
      const session = await withEnvironment({ TMPDIR: tmp, EPISODE_FACTORY_FRESH_SERVERS: fresh }, () =>
        sessionCalls(filesystemServerWorld, 11, () => {
          // The real sandbox, found the way a process on this machine could: it is the world's directory in TMPDIR.
          const base = join(realpathSync(tmp), readdirSync(tmp).find((name) => name.startsWith('episode-factory-filesystem-server-') && !name.includes('-pool-'))!);
          const calls: Call[] = [];
          for (const path of [tmp, `${tmp}/`, realpathSync(tmp), join(tmp, '..'), base, `${base}/`, `${base}/sandbox`, `${base}/sandbox/..`, `${base}/sandbox/../..`, `${base}/home`]) {
            calls.push(['list_directory', { path }], ['read_text_file', { path: `${path}/x` }]);
          }
          calls.push(['read_multiple_files', { paths: [tmp, `${base}/sandbox/notes/todo.txt`] }]);
          return { calls };
        }),
      );
      await closeKeptChildren();
      for (const { name, args, result } of session.results) {
        // What the model itself sent may come back; nothing more of this machine may.
        const text = JSON.stringify(result);
        const given = JSON.stringify(args);
        for (const form of machineForms(tmp).filter((form) => !given.includes(form))) assert.ok(!text.includes(form), `${name} ${given} (TMPDIR ${tmp}) answered ${text}`);
      }
    }
  });
});

describe('hostile: a record of escape attempts made under one TMPDIR replays under another', () => {
  it('env serve (TMPDIR A) keeps the episode, replay (TMPDIR B, deeper) verifies it byte for byte', { timeout: 180_000 }, async () => {
    const first = temporaryDirectory('ef-sp-serve-');
    const second = join(temporaryDirectory('ef-sandbox-path-replay-'), 'some', 'deeper', 'place');
    mkdirSync(second, { recursive: true });
    const out = join(temporaryDirectory('ef-sp-out-'), 'online');
    const environment: NodeJS.ProcessEnv = { ...process.env, TMPDIR: first };
    delete environment.SOURCE_DATE_EPOCH;
    const child = spawn(process.execPath, [CLI, 'env', 'serve', 'filesystem-server-v1', '--port', '0', '--out', out, '--json'], { cwd: REPO_ROOT, env: environment });
    // A hard limit on the server whatever happens below.
    const killer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stdout = '';
        child.stdout.on('data', (chunk) => {
          stdout += String(chunk);
          const line = stdout.split('\n').find((text) => text.startsWith('{'));
          if (line && stdout.includes('\n')) resolve(JSON.parse(line).url);
        });
        void exited.then((status) => reject(new Error(`env serve exited ${status} before listening: ${stderr}`)));
      });
      const reset = await post(url, '/reset', { task: 'read-setting', seed: 3, agent: 'climber' });
      assert.equal(reset.status, 200, JSON.stringify(reset.body));
      const id = reset.body.episode_id;
      const climbs: Call[] = [
        ['list_directory', { path: `${S}/..` }],
        ['read_text_file', { path: `${S}/../../etc/passwd` }],
        ['list_directory', { path: '../..' }],
        ['directory_tree', { path: `${S}/../../..` }],
        ['search_files', { path: `${S}/../..`, pattern: '**' }],
        ['get_file_info', { path: `${S}/../` }],
        ['read_multiple_files', { paths: [`${S}/../../x`, '../../../y', '~/..'] }],
        ['move_file', { source: `${S}/notes/todo.txt`, destination: `${S}/../../todo.txt` }],
      ];
      for (const [turn, [name, args]] of climbs.entries()) {
        const step = await post(url, '/step', { episode_id: id, message: { role: 'assistant', content: '', tool_calls: [{ id: `c${turn}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } });
        assert.equal(step.status, 200, JSON.stringify(step.body));
      }
      const done = await post(url, '/step', { episode_id: id, message: { role: 'assistant', content: 'I could not find it outside the sandbox.' } });
      assert.equal(done.body.done, true, JSON.stringify(done.body));
      const kept = await post(url, `/episodes/${id}/record`);
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      assert.equal(kept.body.written, true, JSON.stringify(kept.body));
    } finally {
      child.kill('SIGTERM');
      await exited;
      clearTimeout(killer);
    }
    const text = readFileSync(join(out, 'episodes.jsonl'), 'utf8');
    for (const form of machineForms(first)) assert.ok(!text.includes(form), `${form} in the record`);
    assert.match(text, /path outside allowed directories: \/ not in \/sandbox/);
    const replayEnvironment: NodeJS.ProcessEnv = { ...process.env, TMPDIR: second };
    delete replayEnvironment.SOURCE_DATE_EPOCH;
    const replayed = await runWithin(120_000, process.execPath, [CLI, 'replay', out], { cwd: REPO_ROOT, env: replayEnvironment });
    assert.equal(replayed.timedOut, false);
    assert.equal(replayed.status, 0, replayed.stdout + replayed.stderr);
    assert.match(replayed.stdout, /1 records, 1 verified, 0 failed/);
  });
});
