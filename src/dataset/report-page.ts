// Owns the report as one self-contained HTML file: the overview tables, the
// charts (inline SVG from svg-charts), the episode viewer's markup, its style
// and script inlined from the assets beside this module, and the embedded
// episodes as JSON blocks the viewer parses only when one is opened. A
// Content-Security-Policy forbids every network request, so the file behaves
// the same from file:// or a web server, online or not.

import { readFileSync } from 'node:fs';
import { FACTORY_VERSION } from '../core/package-paths.js';
import { compareKeys } from './key-order.js';
import type { ReportData, ViewerData } from './report-model.js';
import { escapeXml, faultChart, histogramChart, percentText, rateChart, rateText } from './svg-charts.js';
import type { Rate } from '../statistics/wilson-interval.js';

/** Episodes per embedded JSON block: opening one parses its block only. */
export const EPISODES_PER_BLOCK = 200;

const STYLE = readFileSync(new URL('./report-style.css', import.meta.url), 'utf8');
const SCRIPT = readFileSync(new URL('./report-viewer.js', import.meta.url), 'utf8');

/** Only inline style and script, no fetch, no image or font from anywhere: the report cannot reach the network. */
const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

function html(text: string): string {
  return escapeXml(text);
}

/** JSON inside a script element: `<` escaped so no record text can close the element. */
export function embeddedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** 12,345: thousands grouped the same way on every machine, whatever its locale. */
export function grouped(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${grouped(count)} ${count === 1 ? one : many}`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[], className = ''): string {
  const head = `<tr>${header.map((cell) => `<th scope="col">${html(cell)}</th>`).join('')}</tr>`;
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('\n');
  return `<table${className ? ` class="${className}"` : ''}><thead>${head}</thead><tbody>\n${body}\n</tbody></table>`;
}

function code(text: string): string {
  return `<code>${html(text)}</code>`;
}

function tile(label: string, value: string, detail: string, id: string): string {
  return `<div class="tile" data-tile="${id}"><div class="tile-value">${html(value)}</div><div class="tile-label">${html(label)}</div><div class="tile-detail">${html(detail)}</div></div>`;
}

function rateValue(rate: Rate): string {
  return rate.rate === null ? '–' : percentText(rate.rate);
}

function overviewSection(data: ReportData): string {
  const { overview, stats } = data;
  const tiles = [
    tile('records', grouped(overview.records), overview.problems > 0 ? `${plural(overview.problems, 'unreadable line')} left out` : 'verified by replay', 'records'),
    tile('task completion', rateValue(stats.completion.overall), rateText(stats.completion.overall), 'completion'),
    tile('rejected', overview.rejected === null ? '–' : grouped(overview.rejected), overview.rejected === null ? 'no rejected.jsonl' : 'did not verify; not training data', 'rejected'),
    tile(
      'duplicates dropped',
      overview.duplicates_dropped === null ? '–' : grouped(overview.duplicates_dropped),
      overview.duplicates_dropped === null ? `not deduplicated; ${plural(stats.duplicates.duplicates, 'repeated trajectory', 'repeated trajectories')}` : 'by dedup',
      'dropped',
    ),
    tile('faults fired', grouped(stats.faults.fired), `in ${plural(stats.faults.episodes_with_fault, 'episode')}, ${plural(Object.keys(stats.faults.by_kind).length, 'kind')}`, 'faults'),
    tile('recovery', rateValue(stats.recovery), `${rateText(stats.recovery)} of troubled episodes`, 'recovery'),
  ];
  const parts: string[] = [`<section id="overview"><h2>Overview</h2>`, `<div class="tiles">${tiles.join('')}</div>`];
  if (overview.problems > 0) {
    parts.push(
      `<div class="warning" id="problems"><strong>${plural(overview.problems, 'unreadable line')}</strong> (torn, corrupt or invalid; not counted anywhere in this report):<ul>` +
        overview.problem_examples.map((problem) => `<li>${code(`${problem.file}:${problem.line}`)} ${html(problem.reason)}</li>`).join('') +
        (overview.problems > overview.problem_examples.length ? `<li>… and ${overview.problems - overview.problem_examples.length} more: run <code>episode-factory audit</code></li>` : '') +
        '</ul></div>',
    );
  }
  parts.push('<div class="columns">');
  parts.push(
    '<div><h3>Worlds</h3>' +
      table(['world', 'version', 'tools', 'records'], overview.worlds.map((world) => [code(world.name), html(world.version), String(world.tools), String(world.records)])) +
      '</div>',
  );
  parts.push(
    '<div><h3>Lanes</h3>' +
      table(['lane', 'sha256', 'records'], overview.lanes.map((lane) => [code(lane.name), `<code class="hash" title="${html(lane.sha256)}">${html(lane.sha256.slice(0, 16))}…</code>`, String(lane.records)])) +
      `<p class="facts">produced at ${overview.produced_at.map(code).join(', ') || '–'} · factory ${overview.factory_versions.map(code).join(', ') || '–'}` +
      (overview.operation ? ` · last operation ${code(overview.operation)}` : '') +
      (overview.seeds ? ` · seeds ${code(overview.seeds)}` : '') +
      '</p></div>',
  );
  parts.push('</div>');
  parts.push(
    '<h3>Policies and models</h3>' +
      table(
        ['policy', 'kind', 'actor', 'version', 'digest', 'pinned', 'records'],
        overview.policies.map((policy) => [
          code(policy.key),
          html(policy.kind),
          code(policy.name),
          html(policy.version),
          policy.digest ? `<code class="hash">${html(policy.digest)}</code>` : '–',
          html(policy.details.join(', ') || '–'),
          String(policy.records),
        ]),
        'policies',
      ),
  );
  if (overview.user_simulators.length > 0) {
    const turns = stats.turns;
    parts.push(
      '<h3>User simulators</h3>' +
        `<p class="facts">${plural(turns.simulated_user, 'user turn')} after the opening request, in ${plural(turns.episodes_with_simulated_user, 'episode')}, ` +
        'were written by these simulators, not by the task’s user: the viewer marks them, and a trainer masks them.</p>' +
        table(
          ['simulator', 'kind', 'actor', 'version', 'digest', 'records'],
          overview.user_simulators.map((user) => [
            code(user.key),
            html(user.kind),
            code(user.name),
            html(user.version),
            user.digest ? `<code class="hash">${html(user.digest)}</code>` : '–',
            String(user.records),
          ]),
          'user-simulators',
        ),
    );
  }
  parts.push(
    '<h3>Tasks</h3>' +
      '<p class="facts">Wording: distinct first user messages, distinct phrasings of the message (one for a task said in one sentence; more for a phrasing grammar), and distinct trajectories.</p>' +
      table(
        ['task', 'title', 'world', 'records', 'user messages', 'phrasings', 'trajectories', 'completed'],
        overview.tasks.map((task) => {
          const wording = stats.wording.by_task[task.id];
          return [
            code(task.id),
            html(task.title),
            code(task.world),
            String(task.records),
            String(wording?.user_messages ?? 0),
            String(wording?.phrasings ?? 0),
            String(wording?.trajectories ?? 0),
            html(rateText(stats.completion.by_task[task.id]!)),
          ];
        }),
        'tasks',
      ),
  );
  if (overview.rejected !== null && overview.rejected > 0) {
    parts.push(
      `<h3>Rejected episodes</h3><p>${plural(overview.rejected, 'episode')} did not verify and are not in the records: ` +
        Object.entries(overview.rejected_by_stage).map(([stage, count]) => `${count} at ${code(stage)}`).join(', ') +
        '. The first ones:</p>' +
        table(
          ['record', 'stage', 'reason'],
          overview.rejected_examples.map((row) => [code(row.record_id), code(row.stage), html(row.reason)]),
          'rejected',
        ),
    );
  }
  parts.push('</section>');
  return parts.join('\n');
}

function rateRows(rates: Record<string, Rate>, filter: string): { key: string; label: string; rate: Rate; filter: { name: string; value: string } }[] {
  return Object.entries(rates).map(([key, rate]) => ({ key, label: key, rate, filter: { name: filter, value: key } }));
}

function chartsSection(data: ReportData): string {
  const { stats } = data;
  const charts = [
    rateChart({
      id: 'task-completion',
      title: 'Task completion per task',
      caption: 'Share of episodes whose hidden predicates all passed, with 95% Wilson intervals. Click a bar to list its episodes.',
      axisTitle: 'episodes completed (% of the task’s episodes)',
      rows: rateRows(stats.completion.by_task, 'task'),
      empty: 'No records.',
    }),
    faultChart(
      'faults',
      'Faults fired per kind, and the share recovered',
      `${plural(stats.faults.fired, 'fault')} fired in ${plural(stats.faults.episodes_with_fault, 'episode')}. Recovered: the task was still completed. Click a bar to list its episodes.`,
      Object.entries(stats.faults.by_kind).map(([kind, fault]) => ({ kind, fired: fault.fired, recovered: fault.completed, filter: { name: 'fault', value: kind } })),
    ),
    histogramChart({
      id: 'error-turns',
      title: 'Error turns per episode',
      caption: 'Tool results with ok:false (rejected arguments, tool errors, protocol faults, timeouts) in each episode.',
      xTitle: 'error turns per episode (count)',
      yTitle: 'episodes',
      bins: data.error_turns.histogram,
      empty: 'No records.',
    }),
    histogramChart({
      id: 'episode-length',
      title: 'Episode length',
      caption: `Messages per episode (system, user, assistant and tool): median ${stats.lengths.messages.p50 ?? '–'}, p90 ${stats.lengths.messages.p90 ?? '–'}, max ${stats.lengths.messages.max ?? '–'}.`,
      xTitle: 'messages per episode (count)',
      yTitle: 'episodes',
      bins: stats.lengths.messages.histogram,
      empty: 'No records.',
    }),
    histogramChart({
      id: 'tool-calls',
      title: 'Tool calls per episode',
      caption:
        `Calls the policy emitted, including ones rejected by validation: median ${stats.lengths.tool_calls.p50 ?? '–'}, max ${stats.lengths.tool_calls.max ?? '–'}.` +
        (stats.turns.with_several_calls > 0
          ? ` ${plural(stats.turns.with_several_calls, 'assistant turn')} of ${grouped(stats.turns.with_calls)} made several calls at once, in ${plural(stats.turns.episodes_with_several_calls, 'episode')}.`
          : ''),
      xTitle: 'tool calls per episode (count)',
      yTitle: 'episodes',
      bins: stats.lengths.tool_calls.histogram,
      empty: 'No records.',
    }),
    rateChart({
      id: 'policy-completion',
      title: 'Completion by policy variant or model',
      caption: 'Scripted episodes by the variant the seed drew; model episodes by model and digest. 95% Wilson intervals.',
      axisTitle: 'episodes completed (% of the policy’s episodes)',
      rows: rateRows(data.completion_by_policy, 'policy'),
      empty: 'No records.',
    }),
  ];
  return `<section id="plots"><h2>Plots</h2>\n<div class="charts">\n${charts.join('\n')}</div></section>`;
}

function options(values: readonly string[], counts: ReadonlyMap<string, number>): string {
  return [...values]
    .sort(compareKeys)
    .map((value) => `<option value="${html(value)}">${html(value)} (${counts.get(value) ?? 0})</option>`)
    .join('');
}

function tableCounts(viewer: ViewerData, pick: (entry: ViewerData['entries'][number]) => number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const entry of viewer.entries) for (const index of pick(entry)) counts.set(index, (counts.get(index) ?? 0) + 1);
  return counts;
}

function namedCounts(names: readonly string[], counts: ReadonlyMap<number, number>): Map<string, number> {
  return new Map(names.map((name, index) => [name, counts.get(index) ?? 0]));
}

function viewerSection(data: ReportData): string {
  const { viewer } = data;
  const { tables } = viewer;
  const shown = viewer.entries.length;
  const note = viewer.sampled
    ? `The viewer holds ${plural(shown, 'episode')} of ${plural(viewer.total, 'record')}: a sample in which worlds, then tasks, then policies, outcomes and fault kinds take turns, so each is shown before any is shown twice (raise it with <code>--max-episodes</code>). The overview and the plots count all ${grouped(viewer.total)} records.`
    : `The viewer holds all ${plural(shown, 'record')}.`;
  const counts = {
    worlds: namedCounts(tables.worlds, tableCounts(viewer, (entry) => [entry.world])),
    tasks: namedCounts(tables.tasks, tableCounts(viewer, (entry) => [entry.task])),
    policies: namedCounts(tables.policies, tableCounts(viewer, (entry) => [entry.policy])),
    faults: namedCounts(tables.fault_kinds, tableCounts(viewer, (entry) => entry.faults)),
  };
  const completed = viewer.entries.filter((entry) => entry.completed).length;
  const withFault = viewer.entries.filter((entry) => entry.faults.length > 0).length;
  return `<section id="episodes"><h2>Episodes</h2>
<p class="note" id="sample-note" data-shown="${shown}" data-total="${viewer.total}" data-sampled="${viewer.sampled}">${note}</p>
<div class="filters" role="search">
<label>Search <input type="search" id="filter-text" placeholder="record id, task, request…" autocomplete="off"></label>
<label>World <select id="filter-world"><option value="">all</option>${options(tables.worlds, counts.worlds)}</select></label>
<label>Task <select id="filter-task"><option value="">all</option>${options(tables.tasks, counts.tasks)}</select></label>
<label>Variant or model <select id="filter-policy"><option value="">all</option>${options(tables.policies, counts.policies)}</select></label>
<label>Fault <select id="filter-fault"><option value="">any or none</option><option value="*">any fault fired (${withFault})</option><option value="-">no fault (${shown - withFault})</option>${options(tables.fault_kinds, counts.faults)}</select></label>
<label>Result <select id="filter-completed"><option value="">all</option><option value="yes">completed (${completed})</option><option value="no">not completed (${shown - completed})</option></select></label>
<button type="button" id="filter-clear">Clear</button>
<span id="match-count" aria-live="polite"></span>
</div>
<div class="viewer">
<ol id="episode-list" aria-label="episodes"></ol>
<article id="episode-detail" tabindex="-1"><p class="placeholder">Select an episode to see its conversation, tool calls, faults, the hidden predicates’ verdicts and its lineage.</p></article>
</div>
</section>`;
}

/** The list's index and the shared tool catalogs: parsed when the page loads. */
function indexBlocks(viewer: ViewerData): string {
  const index = {
    total: viewer.total,
    sampled: viewer.sampled,
    per_block: EPISODES_PER_BLOCK,
    tables: viewer.tables,
    // Arrays, not objects: the index of a large report stays small.
    entries: viewer.entries.map((entry) => [
      entry.id,
      entry.world,
      entry.task,
      entry.policy,
      entry.faults,
      entry.completed ? 1 : 0,
      entry.outcome,
      entry.error_turns,
      entry.tool_calls,
      entry.messages,
      entry.prompt,
      entry.user_turns,
      entry.most_calls,
    ]),
  };
  return [
    `<script type="application/json" id="report-index">${embeddedJson(index)}</script>`,
    `<script type="application/json" id="report-catalogs">${embeddedJson(viewer.catalogs)}</script>`,
  ].join('\n');
}

/**
 * The episodes, after the viewer's script: the browser runs the viewer and
 * paints the list while it is still reading these, which are most of the file.
 */
function episodeBlocks(viewer: ViewerData): string {
  const blocks: string[] = [];
  for (let start = 0; start < viewer.episodes.length; start += EPISODES_PER_BLOCK) {
    const block = viewer.episodes.slice(start, start + EPISODES_PER_BLOCK).map((episode) => ({ ...episode.record, catalog: episode.catalog }));
    blocks.push(`<script type="application/json" id="episodes-${start / EPISODES_PER_BLOCK}">${embeddedJson(block)}</script>`);
  }
  return blocks.join('\n');
}

/**
 * A self-contained page of the factory up to its title: the doctype, the
 * content policy that forbids every request, the report's style (and `style`
 * of the page's own), and the header's h1. The caller writes the rest.
 */
export function pageOpening(title: string, contentSecurityPolicy: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="episode-factory ${html(FACTORY_VERSION)}">
<title>${html(title)}</title>
<style>
${STYLE}${style}</style>
</head>
<body>
<header>
<h1>${html(title)}</h1>`;
}

/** The whole report; a pure function of the data, so the same dataset gives the same bytes. */
export function renderReport(data: ReportData): string {
  const { overview } = data;
  const title = `episode-factory report: ${overview.dataset}`;
  const lanes = overview.lanes.map((lane) => lane.name);
  const subtitle = `${plural(overview.records, 'verified record')} from ${lanes.length > 0 ? [...new Set(lanes)].map(code).join(', ') : 'no lane'} · ${plural(overview.tasks.length, 'task')} · ${plural(overview.worlds.length, 'world')} · ${plural(overview.policies.length, 'policy', 'policies')}`;
  return `${pageOpening(title, CONTENT_SECURITY_POLICY, '')}
<p class="subtitle">${subtitle}</p>
<nav><a href="#overview">Overview</a><a href="#plots">Plots</a><a href="#episodes">Episodes</a></nav>
</header>
<main>
${overviewSection(data)}
${chartsSection(data)}
${viewerSection(data)}
</main>
<footer>Written by <code>episode-factory report</code> ${html(FACTORY_VERSION)} from the records alone. One self-contained file: it makes no network request.
Hidden predicates are shown after the fact: the policy never saw them.</footer>
${indexBlocks(data.viewer)}
<script>
${SCRIPT}</script>
${episodeBlocks(data.viewer)}
</body>
</html>
`;
}
