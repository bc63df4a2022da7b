// Holds the CLI to one style for command lines that do not parse: for each
// kind of commander error across several commands it prints one line naming
// the command with the fix on it (or one JSON object under --json), nothing on
// stdout, exit 2; help and version still exit 0. The whole matrix runs through
// main() in this process (a spawned CLI costs about a second here); one case of
// each kind also runs as the installed command, which must say the same. The
// kinds no command uses today (choices, argParser, conflicts) are held on a
// program built here, through the same wiring.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command, InvalidArgumentError, Option } from 'commander';
import { main } from '../../src/cli/main.js';
import { reportError, type Streams } from '../../src/cli/output.js';
import { reportUsageErrorsInProjectStyle, UsageError } from '../../src/cli/usage-errors.js';
import { type CliResult, REPO_ROOT, runCliAsync } from '../helpers.js';

const COMMANDS = /the commands are generate, replay, lanes, worlds, serve, proxy, env, gate, dedup, audit, split, merge, export, stats, card, report, trace, engine, experiment; see `episode-factory --help`$/;

/** [arguments, the exact stderr line or a pattern for it]. */
const CASES: [string[], string | RegExp][] = [
  // A required option missing. (Not export's or card's: their --out is becoming optional.)
  [['dedup', 'datasets/x'], 'episode-factory dedup: required option --out <dir> is missing — fix: pass --out <dir> (where to write the deduplicated dataset (new, empty, or an earlier dedup output)); see `episode-factory dedup --help`'],
  [['merge', 'shards/0', 'shards/1'], 'episode-factory merge: required option --out <dir> is missing — fix: pass --out <dir> (where the merged dataset goes (new, empty, or an earlier dataset)); see `episode-factory merge --help`'],
  [['proxy', '--', 'true'], /^episode-factory proxy: required option --faults <plan\.json> is missing — fix: pass --faults <plan\.json> \(the fault plan .*\); see `episode-factory proxy --help`$/],
  // A required argument missing.
  [['generate'], 'episode-factory generate: required argument <lane> is missing — fix: pass <lane> (a lane name (lanes/<name>.json) or a path to a lane file); see `episode-factory generate --help`'],
  [['lanes', 'show'], 'episode-factory lanes show: required argument <lane> is missing — fix: pass <lane> (a lane name or path); see `episode-factory lanes show --help`'],
  [['merge', '--out', 'x'], 'episode-factory merge: required argument <dirs...> is missing — fix: pass <dirs...> (the shard directories, in any order); see `episode-factory merge --help`'],
  [['replay'], 'episode-factory replay: required argument <dir> is missing — fix: pass <dir> (a dataset directory written by generate); see `episode-factory replay --help`'],
  // An option without its value.
  [['generate', 'tool-world-v1', '--seeds'], "episode-factory generate: option --seeds is missing its value — fix: pass --seeds <A..B> (seed range, both ends inclusive (default: the lane's seeds)); see `episode-factory generate --help`"],
  [['merge', 'shards/0', '--out'], 'episode-factory merge: option --out is missing its value — fix: pass --out <dir> (where the merged dataset goes (new, empty, or an earlier dataset)); see `episode-factory merge --help`'],
  [['audit', 'datasets/x', '--sample'], /^episode-factory audit: option --sample is missing its value — fix: pass --sample <n> \(.+\); see `episode-factory audit --help`$/],
  // An unknown option, with commander's suggestion when it has one.
  [['generate', 'tool-world-v1', '--sedes', '1'], 'episode-factory generate: unknown option --sedes — fix: did you mean --seeds? See `episode-factory generate --help`'],
  [['generate', 'tool-world-v1', '--colour', 'red'], 'episode-factory generate: unknown option --colour — fix: see `episode-factory generate --help` for the options it takes'],
  [['export', 'sft', 'datasets/x', '--out', 'x', '--rendr', 'hermes'], 'episode-factory export sft: unknown option --rendr — fix: did you mean --render? See `episode-factory export sft --help`'],
  [['--frob'], 'episode-factory: unknown option --frob — fix: see `episode-factory --help` for the options it takes'],
  [['generate', 'tool-world-v1', '--a b'], 'episode-factory generate: unknown option "--a b" — fix: see `episode-factory generate --help` for the options it takes'],
  // An unknown command: the nearest one when there is one, and the list.
  [['frobnicate'], new RegExp(`^episode-factory: unknown command "frobnicate" — fix: ${COMMANDS.source}`)],
  [['genrate', 'tool-world-v1'], new RegExp(`^episode-factory: unknown command "genrate" — fix: did you mean generate\\? T${COMMANDS.source.slice(1)}`)],
  [['export', 'sfx', 'datasets/x'], 'episode-factory export: unknown command "sfx" — fix: did you mean sft? The commands are sft, dpo; see `episode-factory export --help`'],
  [['lanes', 'remove'], 'episode-factory lanes: unknown command "remove" — fix: the commands are list, show, rewrite, synthesize, check; see `episode-factory lanes --help`'],
  [['help', 'nope'], /^episode-factory: unknown command "nope" — fix: name one of generate, replay, .*; see `episode-factory --help`$/],
  // No command where one is needed.
  [[], /^episode-factory: no command given — fix: name one of generate, replay, lanes, .*, report, trace, engine, experiment; see `episode-factory --help`$/],
  [['export'], 'episode-factory export: no command given — fix: name one of sft, dpo; see `episode-factory export --help`'],
  [['worlds'], /^episode-factory worlds: no command given — fix: name one of list, show.*; see `episode-factory worlds --help`$/],
  // Too many arguments.
  [['export', 'sft', 'datasets/x', 'extra', '--out', 'x'], 'episode-factory export sft: unexpected argument "extra" (export sft takes <dir>) — fix: remove it, or quote a value that contains spaces; see `episode-factory export sft --help`'],
  [['lanes', 'list', 'all', 'of', 'them'], 'episode-factory lanes list: unexpected arguments "all" "of" "them" (lanes list takes no arguments) — fix: remove them; see `episode-factory lanes list --help`'],
  [['replay', 'datasets/a', 'datasets/b'], 'episode-factory replay: unexpected argument "datasets/b" (replay takes <dir>) — fix: remove it, or quote a value that contains spaces; see `episode-factory replay --help`'],
];

/** The CLI's main() with its output captured: what the installed command does, minus a process. */
async function runMain(...args: string[]): Promise<CliResult> {
  const captured = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') => ({ write: (chunk: string) => ((captured[name] += chunk), true) }) as unknown as Streams['stdout'];
  const status = await main(['node', 'episode-factory', ...args], { stdout: stream('stdout'), stderr: stream('stderr') });
  return { status, ...captured };
}

/** One case of each kind, to run as the installed command too. */
const SPAWNED = [['dedup', 'datasets/x'], ['generate'], ['generate', 'tool-world-v1', '--seeds'], ['generate', 'tool-world-v1', '--sedes', '1'], ['genrate', 'tool-world-v1'], ['export'], ['replay', 'datasets/a', 'datasets/b']];

function assertOneLine(args: string[], result: CliResult, expected: string | RegExp): void {
  const label = `episode-factory ${args.join(' ')}`;
  assert.equal(result.status, 2, `${label}: ${result.stderr}`);
  assert.equal(result.stdout, '', `${label} wrote to stdout`);
  assert.ok(result.stderr.endsWith('\n') && !result.stderr.slice(0, -1).includes('\n'), `${label}: not one line: ${result.stderr}`);
  const line = result.stderr.slice(0, -1);
  if (typeof expected === 'string') assert.equal(line, expected, label);
  else assert.match(line, expected, label);
}

describe('commander errors in the project style', () => {
  it('prints one line with the command and the fix, nothing on stdout, exit 2, for each kind of error', async () => {
    for (const [args, expected] of CASES) assertOneLine(args, await runMain(...args), expected);
  });

  it('says the same as the installed command', async () => {
    const spawned = await Promise.all(SPAWNED.map((args) => runCliAsync(REPO_ROOT, ...args)));
    for (const [index, args] of SPAWNED.entries()) {
      const expected = CASES.find(([caseArgs]) => caseArgs.join(' ') === args.join(' '))![1];
      assertOneLine(args, spawned[index]!, expected);
      assert.deepEqual(spawned[index], await runMain(...args));
    }
    const json = await runCliAsync(REPO_ROOT, 'merge', 'shards/0', '--json');
    assert.deepEqual(json, await runMain('merge', 'shards/0', '--json'));
  });

  it('prints one JSON object on stderr when --json is on the command line', async () => {
    const cases: [string[], { command: string; message: string; fix: RegExp }][] = [
      [['merge', 'shards/0', '--json'], { command: 'episode-factory merge', message: 'required option --out <dir> is missing', fix: /^pass --out <dir> \(where the merged dataset goes .*\); see `episode-factory merge --help`$/ }],
      [['generate', '--json'], { command: 'episode-factory generate', message: 'required argument <lane> is missing', fix: /^pass <lane> / }],
      [['generate', 'tool-world-v1', '--json', '--sedes', '1'], { command: 'episode-factory generate', message: 'unknown option --sedes', fix: /^did you mean --seeds\?/ }],
      [['stats', 'a', 'b', '--json'], { command: 'episode-factory stats', message: 'unexpected argument "b" (stats takes <dir>)', fix: /^remove it/ }],
      [['frobnicate', '--json'], { command: 'episode-factory', message: 'unknown command "frobnicate"', fix: /^the commands are generate, / }],
    ];
    for (const [args, expected] of cases) {
      const result = await runMain(...args);
      assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      const { error } = JSON.parse(result.stderr) as { error: Record<string, string> };
      assert.deepEqual(Object.keys(error), ['code', 'command', 'message', 'fix']);
      assert.equal(error.code, 'usage');
      assert.equal(error.command, expected.command);
      assert.equal(error.message, expected.message);
      assert.match(error.fix!, expected.fix);
    }
  });

  it('leaves --help, `help` and --version as they were: on stdout, exit 0', async () => {
    const cases = [['--help'], ['generate', '--help'], ['export', 'sft', '--help'], ['help', 'generate'], ['--version']];
    const results = await Promise.all(cases.map((args, index) => (index === 2 || index === 4 ? runCliAsync(REPO_ROOT, ...args) : runMain(...args))));
    cases.forEach((args, index) => {
      const result = results[index]!;
      assert.equal(result.status, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr, '');
      assert.ok(result.stdout.length > 0);
    });
    assert.match(results[0]!.stdout, /^Usage: episode-factory \[options\] \[command\]\n/);
    assert.match(results[2]!.stdout, /^Usage: episode-factory export sft \[options\] <dir>\n/);
    assert.match(results[4]!.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});

/** The same wiring on a program with the option kinds no command has yet: whatever a command declares reports this way. */
describe('usage errors for any option a command declares', () => {
  function program(): Command {
    const root = new Command('episode-factory');
    const tool = root.command('tool').description('a tool');
    tool
      .command('run')
      .argument('<count>', 'how many to run', (value: string) => {
        if (!/^\d+$/.test(value)) throw new InvalidArgumentError('Not a whole number.');
        return Number(value);
      })
      .addOption(new Option('--mode <mode>', 'how to run').choices(['fast', 'slow']))
      .option('--limit <n>', 'the most to keep', (value: string) => {
        if (value === 'lots') throw new InvalidArgumentError('Not a number.');
        return value;
      })
      .addOption(new Option('--resume', 'finish the last run').conflicts('restart'))
      .option('--restart', 'start again')
      .addOption(new Option('--level <n>', 'a level from the environment').env('EF_TEST_LEVEL').choices(['1', '2']))
      .action(() => undefined);
    reportUsageErrorsInProjectStyle(root);
    return root;
  }

  async function lineFor(args: string[]): Promise<string> {
    const error = await program()
      .parseAsync(['node', 'episode-factory', ...args])
      .then(
        () => assert.fail(`${args.join(' ')} parsed`),
        (error: unknown) => error,
      );
    assert.ok(error instanceof UsageError, String(error));
    assert.equal(error.exitStatus, 2);
    let text = '';
    const sink = { write: (chunk: string) => ((text += chunk), true) } as unknown as Streams['stderr'];
    assert.equal(reportError(error, { stdout: sink, stderr: sink }), 2);
    return text;
  }

  it('says a value outside the choices, a value the parser refuses, and conflicting options in one line', async () => {
    assert.equal(
      await lineFor(['tool', 'run', '3', '--mode', 'medium']),
      'episode-factory tool run: --mode "medium" is not one of fast, slow — fix: use one of fast, slow for --mode <mode> (how to run); see `episode-factory tool run --help`\n',
    );
    assert.equal(
      await lineFor(['tool', 'run', '3', '--limit', 'lots']),
      'episode-factory tool run: --limit "lots" is invalid: Not a number — fix: pass --limit <n> (the most to keep); see `episode-factory tool run --help`\n',
    );
    assert.equal(
      await lineFor(['tool', 'run', 'three']),
      'episode-factory tool run: <count> "three" is invalid: Not a whole number — fix: pass <count> (how many to run); see `episode-factory tool run --help`\n',
    );
    assert.equal(
      await lineFor(['tool', 'run', '3', '--resume', '--restart']),
      'episode-factory tool run: --resume cannot be used with --restart — fix: pass only one of them; see `episode-factory tool run --help`\n',
    );
  });

  it('says a bad value from an environment variable', async () => {
    process.env.EF_TEST_LEVEL = '9';
    try {
      assert.equal(
        await lineFor(['tool', 'run', '3']),
        'episode-factory tool run: EF_TEST_LEVEL="9" (for --level) is not one of 1, 2 — fix: use one of 1, 2 for --level <n> (a level from the environment); see `episode-factory tool run --help`\n',
      );
    } finally {
      delete process.env.EF_TEST_LEVEL;
    }
  });

  it("keeps commander's words, on one line, for an error it does not know", async () => {
    const root = new Command('episode-factory');
    root.command('odd').action(function (this: Command) {
      this.error('error: something odd\nwith a second line', { code: 'commander.somethingNew' });
    });
    reportUsageErrorsInProjectStyle(root);
    const error = await root.parseAsync(['node', 'episode-factory', 'odd']).catch((caught: unknown) => caught);
    assert.ok(error instanceof UsageError);
    assert.equal(error.command, 'episode-factory odd');
    assert.equal(error.message, 'something odd with a second line');
    assert.equal(error.fix, 'see `episode-factory odd --help`');
  });
});
