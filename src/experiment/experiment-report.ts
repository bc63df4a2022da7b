// Owns the report of `experiment train-eval`: every policy's figures before and
// after training, completion after each fault kind, the paired comparisons,
// the learning curves and the pins, as Markdown and as one self-contained HTML
// page in the dataset report's style. A pure function of the result: the same
// result gives the same bytes, and every number shown is one of the result's
// (or, for the chart's axes and thinned curves, derived from them alone).

import { pageOpening } from '../dataset/report-page.js';
import { countAxis, escapeXml, rateText } from '../dataset/svg-charts.js';
import type { Rate } from '../statistics/wilson-interval.js';
import type { ArmResult, EvaluationResult, TrainEvalResult } from './train-eval.js';

/** What one evaluation's tables are drawn from: the held-out seeds' (the result itself) or the held-out tasks'. */
type Evaluation = Omit<EvaluationResult, 'tasks'>;

const CHART_STYLE = `.chart .curve { fill: none; stroke-width: 1.6; stroke-linejoin: round; }
.chart .heldout { stroke: #fff; stroke-width: 1; }
.chart .phase { stroke: #b8c1cc; stroke-dasharray: 4 3; }
.chart .phase-label, .chart .legend text { fill: var(--muted); font-size: 11px; }
#comparisons li { margin: 4px 0; }
`;

/** Only the inline style: the page has no script and cannot reach the network. */
const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/** More points than a 720-pixel-wide line can show; a few thousand steps become this many bucket means. */
const MAX_DRAWN_POINTS = 400;
const PALETTE = ['#2f6fde', '#c26a00', '#1f8a4c', '#8e44ad', '#c0362c', '#5f6b7a'];

interface Table {
  header: string[];
  rows: string[][];
}

/** The scripted reference first: the ceiling every arm is read against. */
function policies(result: Evaluation): ArmResult[] {
  return [result.scripted, ...result.arms];
}

function callsText(rate: Rate): string {
  return rate.n === 0 ? 'no calls' : rateText(rate);
}

function figuresTable(result: Evaluation): Table {
  return {
    header: ['policy', 'what it is', 'episodes', 'tasks completed', 'well-formed calls', 'exact calls'],
    rows: policies(result).map((policy) => [
      policy.arm,
      policy.description,
      String(policy.figures.episodes),
      rateText(policy.figures.completed),
      callsText(policy.figures.well_formed),
      callsText(policy.figures.exact),
    ]),
  };
}

function recoveryTable(result: Evaluation): Table {
  const kinds = [...new Set(policies(result).flatMap((policy) => Object.keys(policy.figures.recovery)))].sort();
  return {
    header: ['fault kind', ...policies(result).map((policy) => policy.arm)],
    rows: kinds.map((kind) => [kind, ...policies(result).map((policy) => {
      const rate = policy.figures.recovery[kind];
      return rate ? rateText(rate) : '–';
    })]),
  };
}

function comparisonLines(result: Evaluation): string[] {
  const completed = (name: string) => {
    const rate = policies(result).find((policy) => policy.arm === name)?.figures.completed;
    return rate ? `${rate.successes}/${rate.n}` : '–';
  };
  // Read as "second vs first": the difference is the second's completion minus the first's.
  return result.comparisons.map(({ first, second, episodes, difference, mcnemar }) =>
    `${second} vs ${first}: completed ${completed(second)} vs ${completed(first)}, paired difference ${difference < 0 ? '' : '+'}${difference.toFixed(3)} ` +
      `(${episodes} episodes), only ${first} ${mcnemar.first_only}, only ${second} ${mcnemar.second_only}, exact McNemar p = ${mcnemar.p_value.toPrecision(3)}`,
  );
}

/** What a rerun must match to reproduce these figures: [pin, value, sha256]. */
function pinRows(result: TrainEvalResult): string[][] {
  return [
    ['lane', result.lane.name, result.lane.sha256],
    ['factory version', result.factory_version, ''],
    ['base', result.base === 'tiny' ? 'tiny (the recipe\'s shape, from scratch)' : result.base.dir, result.base === 'tiny' ? '' : result.base.sha256],
    ['recipe', result.recipe.name, result.recipe.sha256],
    ...Object.entries(result.data).map(([name, data]) => [`data ${name}`, `${data.path} (${data.records} records, ${data.completed} completed)`, data.sha256]),
    ...result.arms.flatMap((arm) => (arm.model ? [[`model ${arm.arm}`, arm.model.gguf, arm.model.digest]] : [])),
    ...policies(result).map((policy) => [`evaluation ${policy.arm}`, policy.records.path, policy.records.sha256]),
    ...(result.heldout_tasks ? policies(result.heldout_tasks).map((policy) => [`held-out tasks ${policy.arm}`, policy.records.path, policy.records.sha256]) : []),
  ];
}

function subtitle(result: TrainEvalResult): string {
  const pairs = result.pair_seeds === null ? '' : ` · DPO pair seeds ${result.pair_seeds}`;
  const base = result.base === 'tiny' ? '' : ` · base ${result.base.dir}`;
  return `train seeds ${result.train_seeds} · eval seeds ${result.eval_seeds}${pairs}${base} · recipe ${result.recipe.name}`;
}

const RATES_NOTE = 'Rates read successes/n · share [95% Wilson interval]. Calls are every call a policy tried, a malformed turn counting as one; exact calls are the ones the scripted solution of the same episode also made.';

function markdownTable(table: Table): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(table.header), line(table.header.map(() => '---')), ...table.rows.map(line)].join('\n');
}

/** One evaluation's tables and comparison lines, in Markdown, under headings of `level`. */
function markdownEvaluation(evaluation: Evaluation, level: string): string[] {
  const recovery = recoveryTable(evaluation);
  const comparisons = comparisonLines(evaluation);
  return [
    markdownTable(figuresTable(evaluation)),
    '',
    RATES_NOTE,
    '',
    `${level} Completion after each fault kind`,
    '',
    recovery.rows.length > 0 ? markdownTable(recovery) : 'No fault fired in the evaluations.',
    '',
    `${level} Paired comparisons`,
    '',
    ...(comparisons.length > 0 ? comparisons.map((line) => `- ${line}`) : ['No two arms to compare were run.']),
    '',
  ];
}

export function experimentMarkdown(result: TrainEvalResult): string {
  const heldout = result.heldout_tasks;
  return [
    `# Experiment: ${result.lane.name} · ${subtitle(result)}`,
    '',
    `Held-out seeds, tasks ${result.train_tasks.join(', ')} (the tasks trained on):`,
    '',
    ...markdownEvaluation(result, '##'),
    ...(heldout ? [`## Held-out tasks: ${heldout.tasks.join(', ')} (never trained on), the same seeds`, '', ...markdownEvaluation(heldout, '###')] : []),
    '## Pins',
    '',
    ...pinRows(result).map(([pin, value, sha256]) => `- ${pin}: ${value}${sha256 ? ` · sha256 ${sha256}` : ''}`),
    '',
  ].join('\n');
}

function htmlTable(table: Table, codeColumns: readonly number[] = []): string {
  const head = `<tr>${table.header.map((cell) => `<th scope="col">${escapeXml(cell)}</th>`).join('')}</tr>`;
  const body = table.rows
    .map((row) => `<tr>${row.map((cell, column) => `<td>${codeColumns.includes(column) && cell !== '' ? `<code class="hash">${escapeXml(cell)}</code>` : escapeXml(cell)}</td>`).join('')}</tr>`)
    .join('\n');
  return `<table><thead>${head}</thead><tbody>\n${body}\n</tbody></table>`;
}

/** Fixed decimals without a trailing ".0", as svg-charts writes them, so the same curve gives the same bytes. */
function at(value: number): string {
  const text = value.toFixed(1);
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}

/** countAxis's 1-2-5 steps, but fractional: a loss that ends under 1 nat still gets about five ticks. */
function lossAxis(max: number): { top: number; step: number; ticks: number; decimals: number } {
  const rough = (max > 0 ? max : 1) / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate >= rough) ?? 10 * magnitude;
  const ticks = Math.max(1, Math.ceil(max / step - 1e-9));
  return { top: ticks * step, step, ticks, decimals: Math.max(0, -Math.floor(Math.log10(step))) };
}

type Curve = TrainEvalResult['curves'][string];

/** Means over fixed buckets of consecutive points: deterministic, and a spike still moves its bucket's mean. */
function thinned(curve: Curve): { step: number; loss: number }[] {
  const size = Math.max(1, Math.ceil(curve.length / MAX_DRAWN_POINTS));
  const points: { step: number; loss: number }[] = [];
  for (let start = 0; start < curve.length; start += size) {
    const bucket = curve.slice(start, start + size);
    points.push({ step: bucket.reduce((sum, point) => sum + point.step, 0) / bucket.length, loss: bucket.reduce((sum, point) => sum + point.loss, 0) / bucket.length });
  }
  return points;
}

function learningCurves(curves: TrainEvalResult['curves']): string {
  const caption =
    `Training loss per step of each trained arm (where a curve has more than ${MAX_DRAWN_POINTS} steps, each point is the mean of a fixed bucket of consecutive steps); ` +
    'held-out loss as dots; dashed lines where the schedule changes phase. In the dpo phase the loss is the DPO loss (−log σ of the reward margin), not nats per token.';
  const open = `<figure class="chart" id="chart-learning-curves" data-chart="learning-curves">\n<figcaption><strong>Training loss against step</strong> <span>${escapeXml(caption)}</span></figcaption>\n`;
  const arms = Object.entries(curves).filter(([, curve]) => curve.length > 0);
  if (arms.length === 0) return `${open}<p class="empty">No arm took a training step, so there is no learning curve.</p>\n</figure>`;
  const drawn = arms.map(([arm, curve], index) => ({
    arm,
    curve,
    colour: PALETTE[index % PALETTE.length]!,
    points: thinned(curve),
    heldout: curve.flatMap((point) => (point.heldout_loss === undefined ? [] : [{ step: point.step, loss: point.heldout_loss }])),
  }));
  const [width, left, right, top, plotHeight, bottom] = [720, 64, 24, 40, 260, 52];
  const plotWidth = width - left - right;
  const height = top + plotHeight + bottom;
  // reduce, not Math.max(...): a spread of every point of every arm could overflow the stack.
  const xAxis = countAxis(arms.reduce((most, [, curve]) => curve.reduce((arm, point) => Math.max(arm, point.step), most), 0));
  const yAxis = lossAxis(drawn.reduce((most, arm) => [...arm.points, ...arm.heldout].reduce((highest, point) => Math.max(highest, point.loss), most), 0));
  const x = (step: number) => at(left + (step / xAxis.top) * plotWidth);
  const y = (loss: number) => at(top + plotHeight - (loss / yAxis.top) * plotHeight);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="training loss against step" class="chart-learning-curves">`];
  for (let value = 0; value <= xAxis.top; value += xAxis.step) {
    parts.push(`<line class="grid" x1="${x(value)}" y1="${top}" x2="${x(value)}" y2="${top + plotHeight}"/><text class="tick" x="${x(value)}" y="${top + plotHeight + 16}" text-anchor="middle">${value}</text>`);
  }
  for (let tick = 0; tick <= yAxis.ticks; tick++) {
    const value = tick * yAxis.step;
    parts.push(`<line class="grid" x1="${left}" y1="${y(value)}" x2="${left + plotWidth}" y2="${y(value)}"/><text class="tick" x="${left - 6}" y="${at(Number(y(value)) + 4)}" text-anchor="end">${value.toFixed(yAxis.decimals)}</text>`);
  }
  parts.push(`<line class="axis" x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}"/><line class="axis" x1="${left}" y1="${top + plotHeight}" x2="${left + plotWidth}" y2="${top + plotHeight}"/>`);
  parts.push(`<text class="axis-title" x="${at(left + plotWidth / 2)}" y="${top + plotHeight + 40}" text-anchor="middle">step</text>`);
  parts.push(`<text class="axis-title" x="16" y="${at(top + plotHeight / 2)}" text-anchor="middle" transform="rotate(-90 16 ${at(top + plotHeight / 2)})">loss (nats per token)</text>`);
  // Arms trained on the same schedule change phase at the same step: one line for them all.
  const boundaries = new Map<string, { step: number; phase: string; arms: string[] }>();
  for (const { arm, curve } of drawn) {
    curve.forEach((point, index) => {
      if (index === 0 || point.phase === curve[index - 1]!.phase) return;
      const key = `${point.step}\u0000${point.phase}`;
      const boundary = boundaries.get(key) ?? { step: point.step, phase: point.phase, arms: [] };
      boundary.arms.push(arm);
      boundaries.set(key, boundary);
    });
  }
  [...boundaries.values()].sort((a, b) => a.step - b.step || (a.phase < b.phase ? -1 : 1)).forEach((boundary, index) => {
    parts.push(
      `<g class="phase-change" data-step="${boundary.step}" data-phase="${escapeXml(boundary.phase)}"><title>${escapeXml(`${boundary.arms.join(', ')}: ${boundary.phase} from step ${boundary.step}`)}</title>` +
        `<line class="phase" x1="${x(boundary.step)}" y1="${top}" x2="${x(boundary.step)}" y2="${top + plotHeight}"/>` +
        // Alternate rows, so the labels of two changes a few steps apart do not overprint.
        `<text class="phase-label" x="${at(Number(x(boundary.step)) + 3)}" y="${top + 12 + (index % 2) * 13}">${escapeXml(boundary.phase)}</text></g>`,
    );
  });
  drawn.forEach(({ arm, curve, colour, points, heldout }, index) => {
    const first = curve[0]!;
    const last = curve[curve.length - 1]!;
    const tooltip = `${arm}: training loss ${first.loss} at step ${first.step}, ${last.loss} at step ${last.step} (${curve.length} steps)`;
    parts.push(`<g class="arm" data-arm="${escapeXml(arm)}" data-steps="${curve.length}" data-drawn="${points.length}"><title>${escapeXml(tooltip)}</title>`);
    parts.push(`<polyline class="curve" stroke="${colour}" points="${points.map((point) => `${x(point.step)},${y(point.loss)}`).join(' ')}"/>`);
    for (const point of heldout) {
      parts.push(
        `<circle class="heldout" cx="${x(point.step)}" cy="${y(point.loss)}" r="3.5" fill="${colour}" data-arm="${escapeXml(arm)}" data-step="${point.step}" data-loss="${point.loss}">` +
          `<title>${escapeXml(`${arm}: held-out loss ${point.loss} at step ${point.step}`)}</title></circle>`,
      );
    }
    parts.push('</g>');
    const legendX = left + index * 120;
    parts.push(`<g class="legend"><line x1="${legendX}" y1="14" x2="${legendX + 18}" y2="14" stroke="${colour}" stroke-width="2.5"/><text x="${legendX + 24}" y="18">${escapeXml(arm)}</text></g>`);
  });
  const heldoutX = left + drawn.length * 120;
  parts.push(`<g class="legend"><circle cx="${heldoutX + 9}" cy="14" r="3.5" fill="#5f6b7a"/><text x="${heldoutX + 18}" y="18">held-out loss</text></g>`);
  parts.push('</svg>');
  return `${open}${parts.join('\n')}\n</figure>`;
}

/** One evaluation's sections; the held-out tasks' ids carry a prefix so the page's anchors stay unique. */
function htmlEvaluation(evaluation: Evaluation, heading: string): string {
  const recovery = recoveryTable(evaluation);
  const comparisons = comparisonLines(evaluation);
  const id = (name: string) => (heading === '' ? name : `tasks-${name}`);
  return `<section id="${id('figures')}"><h2>${escapeXml(heading)}Before and after training</h2>
${htmlTable(figuresTable(evaluation))}
<p class="facts">${escapeXml(RATES_NOTE)}</p></section>
<section id="${id('recovery')}"><h2>${escapeXml(heading)}Recovery by fault kind</h2>
<p class="facts">Of the episodes in which a fault of the kind fired, the ones still completed; – where the policy met no such fault.</p>
${recovery.rows.length > 0 ? htmlTable(recovery) : '<p class="empty">No fault fired in the evaluations.</p>'}</section>
<section id="${id('comparisons')}"><h2>${escapeXml(heading)}Paired comparisons</h2>
${comparisons.length > 0 ? `<ul>${comparisons.map((line) => `<li>${escapeXml(line)}</li>`).join('\n')}</ul>` : '<p class="empty">No two arms to compare were run.</p>'}</section>`;
}

export function experimentHtml(result: TrainEvalResult): string {
  const title = `Experiment: ${result.lane.name}`;
  return `${pageOpening(title, CONTENT_SECURITY_POLICY, CHART_STYLE)}
<p class="subtitle">${escapeXml(subtitle(result))}</p>
<nav><a href="#figures">Before and after</a><a href="#recovery">Recovery</a><a href="#comparisons">Comparisons</a><a href="#curves">Learning curves</a><a href="#pins">Pins</a></nav>
</header>
<main>
${htmlEvaluation(result, '')}
${result.heldout_tasks ? htmlEvaluation(result.heldout_tasks, `Held-out tasks (${result.heldout_tasks.tasks.join(', ')}, never trained on): `) : ''}
<section id="curves"><h2>Learning curves</h2>
${learningCurves(result.curves)}</section>
<section id="pins"><h2>Pins</h2>
${htmlTable({ header: ['pin', 'value', 'sha256'], rows: pinRows(result) }, [2])}</section>
</main>
<footer>Written by <code>episode-factory experiment train-eval</code> ${escapeXml(result.factory_version)} from the run's result alone. One self-contained file: it makes no network request.</footer>
</body>
</html>
`;
}
