#!/usr/bin/env node
// Measures how varied the lanes' user messages are: generates every lane in a
// directory over its own seeds (JSONL only) and prints, per task, the records,
// the distinct first user messages, the distinct phrasings and the distinct
// trajectories that `stats --json` reports, as a Markdown table. Run it on
// an older checkout's lanes to compare, e.g.:
//
//   git archive <commit> lanes | tar -x -C /tmp/before
//   node scripts/wording-diversity.mjs --lanes /tmp/before/lanes --out /tmp/before/data
//   node scripts/wording-diversity.mjs --out /tmp/after/data

import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const cli = join(root, 'bin', 'episode-factory.js');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const lanesDir = resolve(option('--lanes', join(root, 'lanes')));
const outDir = resolve(option('--out', join(root, 'tmp', 'wording-diversity')));
const named = args.filter((arg, index) => !arg.startsWith('--') && !['--lanes', '--out'].includes(args[index - 1]));
const lanes = named.length ? named : readdirSync(lanesDir).filter((file) => file.endsWith('.json')).map((file) => file.slice(0, -'.json'.length)).sort();

const run = (...command) => execFileSync(process.execPath, [cli, ...command], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const rows = [];
for (const lane of lanes) {
  const out = join(outDir, lane);
  run('generate', join(lanesDir, `${lane}.json`), '--out', out, '--format', 'jsonl');
  const stats = JSON.parse(run('stats', out, '--json'));
  for (const [task, wording] of Object.entries(stats.wording.by_task)) rows.push({ lane, task, ...wording });
  process.stderr.write(`${lane}: ${Object.keys(stats.wording.by_task).length} tasks\n`);
}

const mean = (values) => (values.reduce((sum, value) => sum + value, 0) / values.length).toFixed(2);
console.log('| lane | task | records | user messages | phrasings | trajectories |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.lane} | ${row.task} | ${row.records} | ${row.user_messages} | ${row.phrasings} | ${row.trajectories} |`);
console.log('');
console.log('| lane | tasks | records per task | mean user messages per task | mean phrasings per task |');
console.log('|---|---|---|---|---|');
for (const lane of lanes) {
  const ofLane = rows.filter((row) => row.lane === lane);
  console.log(`| ${lane} | ${ofLane.length} | ${mean(ofLane.map((row) => row.records))} | ${mean(ofLane.map((row) => row.user_messages))} | ${mean(ofLane.map((row) => row.phrasings))} |`);
}
