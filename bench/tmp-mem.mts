import { generateDataset } from '../src/factory/generate-dataset.js';
import { loadLane } from '../src/lanes/lane-loader.js';
const lane = loadLane('tool-world-v1', process.cwd());
const timer = setInterval(() => { const m = process.memoryUsage(); process.stderr.write(`${(performance.now()/1000).toFixed(0)}s rss ${(m.rss/1e6).toFixed(0)} heapUsed ${(m.heapUsed/1e6).toFixed(0)} heapTotal ${(m.heapTotal/1e6).toFixed(0)} external ${(m.external/1e6).toFixed(0)} ab ${(m.arrayBuffers/1e6).toFixed(0)}\n`); }, 2000);
await generateDataset({ lane, outDir: '/tmp/mem-run', seeds: { from: 0, to: Number(process.argv[2] ?? 799) }, workers: Number(process.argv[3] ?? 2), formats: (process.argv[4] ?? 'jsonl,arrow,parquet').split(',') as never });
clearInterval(timer);
console.log('maxRSS', (process.resourceUsage().maxRSS / 1024).toFixed(0), 'MB');
