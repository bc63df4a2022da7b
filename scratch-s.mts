import { getWorld } from './src/world/world-registry.js';
import { drawInitialSnapshot } from './src/world/world-session.js';
import { substream } from './src/core/random.js';
import { surveyState } from './src/synthesis/state-survey.js';
const name = process.argv[2]!;
const w = getWorld(name);
const snap = await drawInitialSnapshot(w, substream(0, 'world'), {}, '2026-12-01T00:00:00Z');
for (const c of surveyState(snap)) console.log(c.pointer, c.noun, 'naming', c.naming, 'fields', c.fields.slice(0,12), 'kinds', c.kinds.map(k=>k.field+':'+k.values.length), 'n', c.items.length, JSON.stringify(c.items[0]).slice(0,250));
import { drawCandidate } from './src/synthesis/candidate-sampler.js';
if (process.argv[3]) {
  const tools = w.tools.map((tool) => ({ name: tool.name, inputSchema: tool.inputSchema, ...(tool.annotations ? { annotations: tool.annotations } : {}) }));
  const d = drawCandidate({ tools, collections: surveyState(snap), shownRoot: (w as any).shownRoot }, substream(Number(process.argv[3]), `synthesize:${name}`));
  console.log(JSON.stringify('problem' in d ? d : { calls: d.calls, params: d.pool.params }, null, 1));
}
