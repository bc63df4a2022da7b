// Lanes, rewrites caches and fault plans nested 100,000 deep or larger than a
// definition file may be, run through the installed command as a user would.
// A predicate's not-chain that deep made `lanes check` and `generate` die with
// "internal error: Maximum call stack size exceeded"; a call's arguments or an
// equals that deep came back as a "problem" that was the stack overflow's
// message. Now each is refused at load (exit 2) naming the file, the limit and
// how to get under it, and nothing is written.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_DEFINITION_BYTES, MAX_DEFINITION_DEPTH } from '../../src/core/definition-file.js';
import { startFakeOllama, type FakeOllama } from '../fixtures/fake-ollama.js';
import { REPO_ROOT, runCliWithin, temporaryDirectory } from '../helpers.js';

const LIMIT_MS = 60_000;
const DEPTH = 100_000;

const cli = (...args: string[]) => runCliWithin(LIMIT_MS, REPO_ROOT, ...args);

const baseLane = () => JSON.parse(readFileSync(join(REPO_ROOT, 'lanes', 'tool-world-v1.json'), 'utf8'));

/** JSON text nested `depth` levels, objects and lists in turn, around 1. */
function deepText(depth: number): string {
  const lists = Math.floor(depth / 2);
  return '{"k":['.repeat(lists) + '1' + ']}'.repeat(lists);
}

/** Writes a lane named `name` (tool-world-v1 with `edit` applied) whose "@@" placeholder is replaced by raw JSON text. */
function laneFile(directory: string, name: string, edit: (lane: any) => void, placeholder: string): string {
  const lane = baseLane();
  lane.name = name;
  edit(lane);
  const path = join(directory, `${name}.json`);
  writeFileSync(path, JSON.stringify(lane).replace('"@@"', placeholder));
  return path;
}

const depthReason = (what: string) => new RegExp(`: nests deeper than ${MAX_DEFINITION_DEPTH} levels, the limit for ${what}`);

let fake: FakeOllama;
before(async () => {
  fake = await startFakeOllama();
});
after(async () => {
  await fake.close();
});

describe('definition files past the limits are refused at load, naming the file, the limit and the fix', { timeout: 10 * LIMIT_MS }, () => {
  const directory = temporaryDirectory('ef-hostile-definition-');
  const notChain = '{"not":'.repeat(DEPTH) + '{"path": "/issues", "exists": true}' + '}'.repeat(DEPTH);
  const lanes = {
    'deep-predicate': laneFile(directory, 'deep-predicate', (lane) => (lane.tasks[0].predicates[0] = { id: 'deep', not: '@@' }), notChain),
    'deep-arguments': laneFile(directory, 'deep-arguments', (lane) => (lane.tasks[0].solution.find((step: any) => step.arguments).arguments = { query: '@@' }), deepText(DEPTH)),
    'deep-equals': laneFile(directory, 'deep-equals', (lane) => (lane.tasks[0].predicates[0] = { id: 'deep', path: '/issues', equals: '@@' }), deepText(DEPTH)),
  };

  for (const [name, path] of Object.entries(lanes)) {
    it(`${name}: lanes check, lanes show and generate exit 2 with the limit; generate writes nothing`, { timeout: 4 * LIMIT_MS }, async () => {
      const out = join(temporaryDirectory('ef-hostile-definition-out-'), 'out');
      for (const args of [['lanes', 'check', path], ['lanes', 'show', path], ['generate', path, '--out', out]]) {
        const run = await cli(...args);
        assert.equal(run.timedOut, false, `${args.join(' ')} ran past ${LIMIT_MS} ms`);
        assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
        assert.doesNotMatch(run.stderr, /Maximum call stack|internal error/);
        assert.ok(run.stderr.includes(`${path}: nests deeper than ${MAX_DEFINITION_DEPTH} levels, the limit for a lane; a lane nests about a dozen levels: flatten its deepest value`), `${args.join(' ')}: ${run.stderr}`);
        assert.match(run.stderr, new RegExp(`${name}\\.json is not a valid lane \\(1 problem\\) — fix:`));
      }
      assert.equal(existsSync(out), false, 'no output directory was made');
    });
  }

  it('a lane at the limit loads', { timeout: LIMIT_MS }, async () => {
    // The not-chain sits 5 levels down (lane, tasks, task, predicates, predicate); its innermost predicate is one more.
    const chain = MAX_DEFINITION_DEPTH - 6;
    const path = laneFile(directory, 'deep-but-not-too-deep', (lane) => (lane.tasks[0].predicates[0] = { id: 'deep', not: '@@' }), '{"not":'.repeat(chain) + '{"path": "/issues", "exists": true}' + '}'.repeat(chain));
    const run = await cli('lanes', 'show', path);
    assert.equal(run.status, 0, run.stderr);
    const over = laneFile(directory, 'one-level-too-deep', (lane) => (lane.tasks[0].predicates[0] = { id: 'deep', not: '@@' }), '{"not":'.repeat(chain + 1) + '{"path": "/issues", "exists": true}' + '}'.repeat(chain + 1));
    const refused = await cli('lanes', 'show', over);
    assert.equal(refused.status, 2, refused.stderr);
    assert.match(refused.stderr, depthReason('a lane'));
  });

  it('a lane larger than the limit is refused before it is read, naming its size', { timeout: LIMIT_MS }, async () => {
    const path = laneFile(directory, 'huge-lane', (lane) => (lane.description = '@@'), JSON.stringify('x'.repeat(MAX_DEFINITION_BYTES)));
    const size = readFileSync(path).length;
    const run = await cli('lanes', 'show', path);
    assert.equal(run.status, 2, run.stderr);
    assert.ok(run.stderr.includes(`${path}: is ${size} bytes, over the limit of ${MAX_DEFINITION_BYTES} bytes for a lane; a lane is tens of kilobytes: split its tasks across several lanes`), run.stderr);
  });

  it('a rewrites cache nested 100,000 deep is refused, naming the cache and the limit', { timeout: LIMIT_MS }, async () => {
    const path = laneFile(directory, 'deep-cache', (lane) => (lane.rewrites = 'deep-cache.rewrites.json'), '"deep-cache.rewrites.json"');
    writeFileSync(join(directory, 'deep-cache.rewrites.json'), `{"format": "episode-factory.rewrites.v1", "lane": "deep-cache", "writer": ${deepText(DEPTH)}, "tasks": {}}`);
    const run = await cli('lanes', 'check', path);
    assert.equal(run.status, 2, run.stderr);
    assert.doesNotMatch(run.stderr, /Maximum call stack|internal error/);
    assert.ok(run.stderr.includes(`${path}: /rewrites: ${join(directory, 'deep-cache.rewrites.json')} nests deeper than ${MAX_DEFINITION_DEPTH} levels, the limit for a rewrites cache`), run.stderr);
  });

  it('lanes rewrite refuses a lane nested 100,000 deep before asking the writer anything', { timeout: LIMIT_MS }, async () => {
    const asked = fake.requestsTo('/api/chat').length + fake.requestsTo('/api/generate').length;
    const run = await cli('lanes', 'rewrite', lanes['deep-predicate'], '--model', 'ollama:fake-qwen:1b', '--ollama-host', fake.url);
    assert.equal(run.timedOut, false);
    assert.equal(run.status, 2, run.stderr);
    assert.doesNotMatch(run.stderr, /Maximum call stack|internal error/);
    assert.match(run.stderr, depthReason('a lane'));
    assert.equal(fake.requestsTo('/api/chat').length + fake.requestsTo('/api/generate').length, asked);
  });

  it('proxy refuses a fault plan nested 100,000 deep, naming the limit', { timeout: LIMIT_MS }, async () => {
    const plan = join(directory, 'deep-plan.json');
    writeFileSync(plan, `{"faults": [{"id": "deep", "kind": "latency", "params": ${deepText(DEPTH)}}]}`);
    const run = await cli('proxy', '--faults', plan, '--', process.execPath, '-e', '');
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, new RegExp(`fault plan ${plan} nests deeper than ${MAX_DEFINITION_DEPTH} levels, the limit for a fault plan — fix: a fault plan nests a few levels`));
  });
});
