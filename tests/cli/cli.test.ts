// End-to-end: runs the installed command (bin/episode-factory.js) in a fresh
// working directory, exactly as a user would, and checks output and exit codes.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLI, REPO_ROOT, temporaryDirectory } from '../helpers.js';

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(cwd: string, ...args: string[]): Result {
  const environment = { ...process.env };
  delete environment.SOURCE_DATE_EPOCH;
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', env: environment });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('episode-factory command line', () => {
  const workdir = temporaryDirectory('ef-cli-');
  const dataset = join(workdir, 'datasets', 'tool-world-v1');

  it('explains every command in --help', () => {
    const help = cli(workdir, '--help');
    assert.equal(help.status, 0);
    for (const word of ['generate', 'replay', 'lanes', 'Exit status']) assert.ok(help.stdout.includes(word), word);
    const generate = cli(workdir, 'generate', '--help');
    assert.equal(generate.status, 0);
    for (const option of ['--seeds <A..B>', '--task <id...>', '--out <dir>', '--json']) assert.ok(generate.stdout.includes(option), option);
  });

  it('generates the default lane into datasets/<lane> with a one-line summary', () => {
    const result = cli(workdir, 'generate', 'tool-world-v1');
    assert.equal(result.status, 0, result.stderr);
    assert.match(
      result.stdout,
      /^generate tool-world-v1: 40 episodes, 40 records written, 0 rejected, tasks completed 40\/40 \(100\.0%\), wall \d+\.\d\ds -> datasets\/tool-world-v1\n$/,
    );
    assert.equal(readFileSync(join(dataset, 'episodes.jsonl'), 'utf8'), readFileSync(join(REPO_ROOT, 'datasets', 'tool-world-v1', 'episodes.jsonl'), 'utf8'));
    for (const file of ['rejected.jsonl', 'manifest.json', 'traces']) assert.ok(existsSync(join(dataset, file)), file);
  });

  it('prints a JSON summary with --json', () => {
    const result = cli(workdir, 'generate', 'tool-world-v1', '--seeds', '2..3', '--task', 'find-open-bugs', '--out', 'small', '--json');
    assert.equal(result.status, 0, result.stderr);
    const summary = JSON.parse(result.stdout);
    assert.equal(summary.lane, 'tool-world-v1');
    assert.deepEqual([summary.episodes, summary.written, summary.rejected, summary.completed], [2, 2, 0, 2]);
    assert.equal(summary.completion_rate, 1);
    assert.equal(summary.out_dir, 'small');
    assert.equal(summary.seeds, '2..3');
  });

  it('replays the dataset it wrote and exits 0', () => {
    const result = cli(workdir, 'replay', 'datasets/tool-world-v1');
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^replay datasets\/tool-world-v1: 40 records, 40 verified, 0 failed \(wall \d+\.\d\ds\)\n$/);
  });

  it('exits 1 naming each record that no longer verifies after a hand edit, and each torn line', () => {
    const copy = join(workdir, 'edited');
    cli(workdir, 'generate', 'tool-world-v1', '--seeds', '0..1', '--out', copy, '--quiet');
    const file = join(copy, 'episodes.jsonl');
    const rows = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const edited = JSON.parse(rows[1]!);
    const tool = edited.messages.find((message: any) => message.role === 'tool' && message.tool_result.ok);
    tool.content = tool.content.replace(/\d{4}/, '1111');
    rows[1] = JSON.stringify(edited);
    writeFileSync(file, rows.join('\n') + '\n');
    appendFileSync(file, '{"record_id": "torn');
    const result = cli(workdir, 'replay', copy);
    assert.equal(result.status, 1);
    assert.ok(result.stdout.includes(`FAIL ${edited.record_id}: tool result of ${tool.tool_call_id} differs`), result.stdout);
    assert.ok(result.stdout.includes(`FAIL episodes.jsonl:${rows.length + 1}: torn last line`), result.stdout);
    assert.match(result.stdout, /10 records, 9 verified, 1 failed, 1 corrupt line/);
    const one = cli(workdir, 'replay', copy, '--record', rows.length > 2 ? JSON.parse(rows[2]!).record_id : '', '--json');
    assert.equal(JSON.parse(one.stdout).records, 1);
  });

  it("regenerates and replays one record with the record's own commands, without touching the dataset", () => {
    const record = JSON.parse(readFileSync(join(dataset, 'episodes.jsonl'), 'utf8').split('\n')[7]!);
    const before = readFileSync(join(dataset, 'episodes.jsonl'), 'utf8');
    const words = (command: string) => command.split(' ').slice(1);
    const generate = cli(workdir, ...words(record.provenance.lineage.generate_command));
    assert.equal(generate.status, 0, generate.stderr);
    const replay = cli(workdir, ...words(record.provenance.lineage.replay_command));
    assert.equal(replay.status, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, / 1 records, 1 verified, 0 failed/);
    const regenerated = readFileSync(join(workdir, 'regenerated', record.record_id, 'episodes.jsonl'), 'utf8');
    assert.equal(regenerated, JSON.stringify(record) + '\n', 'regenerated byte for byte');
    assert.equal(readFileSync(join(dataset, 'episodes.jsonl'), 'utf8'), before, 'the dataset itself is untouched');
  });

  it('lists and shows lanes', () => {
    const list = cli(workdir, 'lanes', 'list');
    assert.equal(list.status, 0);
    assert.match(list.stdout, /^NAME\s+WORLD\s+TASKS\s+SEEDS\s+POLICY\s+DESCRIPTION\n/);
    assert.match(list.stdout, /\ntool-world-v1\s+issues\s+5\s+0\.\.7\s+scripted\s+/);
    const rows = JSON.parse(cli(workdir, 'lanes', 'list', '--json').stdout);
    assert.ok(rows.some((row: any) => row.name === 'tool-world-v1' && row.valid && row.tasks === 5));
    const show = cli(workdir, 'lanes', 'show', 'tool-world-v1');
    assert.equal(show.status, 0);
    for (const text of ['world       issues 1.0.0 (9 tools', 'close-named-issue: Close a named issue', 'predicates  is-closed', 'solution    remove_label -> add_label -> answer']) {
      assert.ok(show.stdout.includes(text), text);
    }
    const json = JSON.parse(cli(workdir, 'lanes', 'show', 'tool-world-v1', '--json').stdout);
    assert.match(json.sha256, /^[0-9a-f]{64}$/);
    assert.equal(json.tasks.length, 5);
  });

  it('rejects a malformed lane with every problem (file, JSON path, reason), exit 2, and writes nothing', () => {
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));
    document.name = 'broken';
    document.seeds = '7..2';
    document.tasks[0].solution[0].call = 'search_isues';
    delete document.tasks[1].predicates;
    writeFileSync(join(workdir, 'broken.json'), JSON.stringify(document));
    const result = cli(workdir, 'generate', 'broken.json', '--out', 'never');
    assert.equal(result.status, 2);
    const lines = result.stderr.trim().split('\n');
    assert.ok(lines.some((line) => line.includes('broken.json: /tasks/1/predicates: missing required field')), result.stderr);
    assert.match(lines.at(-1)!, /^episode-factory: broken\.json is not a valid lane \(\d+ problems?\) — fix: /);
    assert.equal(existsSync(join(workdir, 'never')), false);

    delete document.tasks[1];
    document.tasks = document.tasks.filter(Boolean);
    writeFileSync(join(workdir, 'broken.json'), JSON.stringify(document));
    const semantic = cli(workdir, 'lanes', 'show', 'broken.json');
    assert.equal(semantic.status, 2);
    assert.ok(semantic.stderr.includes('broken.json: /seeds: "7..2" ends before it starts'), semantic.stderr);
    assert.ok(semantic.stderr.includes('broken.json: /tasks/0/solution/0/call: unknown tool "search_isues"'), semantic.stderr);
  });

  it('exits 2 when no command is given, and reports errors as JSON under --json', () => {
    const bare = cli(workdir);
    assert.equal(bare.status, 2);
    assert.match(bare.stderr, /Usage: episode-factory/);
    const json = cli(workdir, 'generate', 'no-such-lane', '--json');
    assert.equal(json.status, 2);
    const error = JSON.parse(json.stderr).error;
    assert.equal(error.code, 'lane_not_found');
    assert.match(error.fix, /known lanes/);
  });

  it('exits 2 with the fix on the same line for usage problems', () => {
    const cases: [string[], RegExp][] = [
      [['generate', 'tool-world-v1', '--seeds', 'ten'], /--seeds: "ten" is not a seed range — fix: write it as A\.\.B/],
      [['generate', 'no-such-lane'], /no lane named "no-such-lane" — fix: known lanes: .*tool-world-v1/],
      [['generate', 'tool-world-v1', '--task', 'nope'], /lane tool-world-v1 has no task "nope" — fix: tasks are: find-open-bugs/],
      [['replay', 'nowhere'], /nowhere is not a directory — fix: /],
      [['generate', 'tool-world-v1', '--colour', 'red'], /unknown option '--colour'/],
    ];
    for (const [args, pattern] of cases) {
      const result = cli(workdir, ...args);
      assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, pattern);
    }
  });
});
