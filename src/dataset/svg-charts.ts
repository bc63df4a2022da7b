// Owns the report's charts, drawn as plain inline SVG by the factory: no
// chart library, no script, nothing fetched, the same bytes for the same
// numbers. Every chart has axes with ticks, a titled axis with its unit, and
// each mark carries its numbers as data attributes and a tooltip, so a reader
// (or a test in a browser) can check what was drawn.

import { clip } from '../core/clipped-text.js';
import type { HistogramBin } from './stats-distribution.js';
import type { Rate } from '../statistics/wilson-interval.js';

// Two charts side by side fill the report's width at their natural size: text stays 12 px.
const WIDTH = 576;
const LABEL_WIDTH = 150;
const NOTE_WIDTH = 178;
const PLOT_WIDTH = WIDTH - LABEL_WIDTH - NOTE_WIDTH;
const ROW_HEIGHT = 26;
const TOP = 12;
const AXIS_HEIGHT = 46;
const MAX_LABEL_CHARS = 24;

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Fixed decimals, without a trailing ".0", so coordinates are short and stable. */
function coordinate(value: number): string {
  const text = value.toFixed(1);
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}

export function percentText(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}

/** `55/80 · 69% [58%, 78%]`. */
export function rateText(rate: Rate): string {
  if (rate.rate === null) return 'no episodes';
  return `${rate.successes}/${rate.n} · ${percentText(rate.rate)} [${percentText(rate.low)}, ${percentText(rate.high)}]`;
}

/** A round upper bound and step for a count axis: at most about five ticks. */
export function countAxis(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 1, step: 1 };
  const rough = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate >= rough) ?? 10 * magnitude;
  const whole = Math.max(1, Math.round(step));
  return { top: Math.ceil(max / whole) * whole, step: whole };
}

/** A link from a mark to the episode viewer's filter of the same name. */
export interface ChartFilter {
  name: string;
  value: string;
}

function filterAttributes(filter: ChartFilter | undefined): string {
  return filter ? ` data-filter="${escapeXml(filter.name)}" data-filter-value="${escapeXml(filter.value)}" tabindex="0" role="button"` : '';
}

function figure(id: string, title: string, caption: string, svg: string): string {
  return (
    `<figure class="chart" id="chart-${id}" data-chart="${id}">\n` +
    `<figcaption><strong>${escapeXml(title)}</strong> <span>${escapeXml(caption)}</span></figcaption>\n` +
    `${svg}\n</figure>\n`
  );
}

function svgOpen(id: string, height: number, label: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeXml(label)}" class="chart-${id}">`;
}

/** Vertical grid lines, tick labels and the axis title below a horizontal-bar plot. */
function horizontalAxis(rows: number, ticks: readonly { at: number; label: string }[], title: string): string {
  const plotBottom = TOP + rows * ROW_HEIGHT;
  const parts: string[] = [];
  for (const tick of ticks) {
    const x = coordinate(LABEL_WIDTH + tick.at * PLOT_WIDTH);
    parts.push(`<line class="grid" x1="${x}" y1="${TOP}" x2="${x}" y2="${plotBottom}"/>`);
    parts.push(`<text class="tick" x="${x}" y="${plotBottom + 16}" text-anchor="middle">${escapeXml(tick.label)}</text>`);
  }
  parts.push(`<line class="axis" x1="${LABEL_WIDTH}" y1="${plotBottom}" x2="${LABEL_WIDTH + PLOT_WIDTH}" y2="${plotBottom}"/>`);
  parts.push(`<line class="axis" x1="${LABEL_WIDTH}" y1="${TOP}" x2="${LABEL_WIDTH}" y2="${plotBottom}"/>`);
  parts.push(`<text class="axis-title" x="${coordinate(LABEL_WIDTH + PLOT_WIDTH / 2)}" y="${plotBottom + 36}" text-anchor="middle">${escapeXml(title)}</text>`);
  return parts.join('');
}

function rowLabel(label: string, y: number): string {
  return `<text class="label" x="${LABEL_WIDTH - 8}" y="${coordinate(y + ROW_HEIGHT / 2 + 4)}" text-anchor="end">${escapeXml(clip(label, MAX_LABEL_CHARS))}</text>`;
}

function rowNote(text: string, y: number): string {
  return `<text class="note" x="${LABEL_WIDTH + PLOT_WIDTH + 8}" y="${coordinate(y + ROW_HEIGHT / 2 + 4)}">${escapeXml(text)}</text>`;
}

export interface RateRow {
  key: string;
  label: string;
  rate: Rate;
  filter?: ChartFilter;
}

export interface RateChart {
  id: string;
  title: string;
  caption: string;
  axisTitle: string;
  rows: readonly RateRow[];
  empty: string;
}

/** A share per row as a bar, with its 95% Wilson interval as a whisker; 0–100% axis. */
export function rateChart(chart: RateChart): string {
  if (chart.rows.length === 0) return figure(chart.id, chart.title, chart.caption, `<p class="empty">${escapeXml(chart.empty)}</p>`);
  const height = TOP + chart.rows.length * ROW_HEIGHT + AXIS_HEIGHT;
  const parts = [svgOpen(chart.id, height, chart.title)];
  const ticks = [0, 0.2, 0.4, 0.6, 0.8, 1].map((at) => ({ at, label: percentText(at) }));
  parts.push(horizontalAxis(chart.rows.length, ticks, chart.axisTitle));
  chart.rows.forEach((row, index) => {
    const y = TOP + index * ROW_HEIGHT;
    const { rate } = row;
    const tooltip = `${row.label}: ${rateText(rate)} (95% Wilson interval)`;
    parts.push(
      `<g class="row" data-key="${escapeXml(row.key)}" data-successes="${rate.successes}" data-n="${rate.n}"` +
        ` data-rate="${rate.rate === null ? '' : rate.rate.toFixed(4)}" data-low="${rate.low.toFixed(4)}" data-high="${rate.high.toFixed(4)}"${filterAttributes(row.filter)}>`,
    );
    parts.push(`<title>${escapeXml(tooltip)}</title>`);
    parts.push(rowLabel(row.label, y));
    if (rate.rate !== null) {
      const barWidth = rate.rate * PLOT_WIDTH;
      parts.push(`<rect class="bar" x="${LABEL_WIDTH}" y="${coordinate(y + 5)}" width="${coordinate(barWidth)}" height="${ROW_HEIGHT - 10}"/>`);
      const low = coordinate(LABEL_WIDTH + rate.low * PLOT_WIDTH);
      const high = coordinate(LABEL_WIDTH + rate.high * PLOT_WIDTH);
      const middle = coordinate(y + ROW_HEIGHT / 2);
      parts.push(
        `<path class="interval" d="M${low} ${middle}H${high}M${low} ${coordinate(y + 8)}V${coordinate(y + ROW_HEIGHT - 8)}M${high} ${coordinate(y + 8)}V${coordinate(y + ROW_HEIGHT - 8)}"/>`,
      );
    }
    parts.push(rowNote(rateText(rate), y));
    parts.push('</g>');
  });
  parts.push('</svg>');
  return figure(chart.id, chart.title, chart.caption, parts.join('\n'));
}

export interface FaultRow {
  kind: string;
  /** Times it fired over all episodes. */
  fired: number;
  /** Episodes it fired in, and of those the ones whose task was still completed. */
  recovered: Rate;
  filter?: ChartFilter;
}

/** Episodes each fault kind fired in, split into recovered (task still completed) and not; a count axis. */
export function faultChart(id: string, title: string, caption: string, rows: readonly FaultRow[]): string {
  if (rows.length === 0) return figure(id, title, caption, '<p class="empty">No fault fired in these records.</p>');
  const legendHeight = 22;
  const top = TOP + legendHeight;
  const height = top + rows.length * ROW_HEIGHT + AXIS_HEIGHT;
  const axis = countAxis(Math.max(...rows.map((row) => row.recovered.n)));
  const scale = (count: number): number => (count / axis.top) * PLOT_WIDTH;
  const parts = [svgOpen(id, height, title)];
  parts.push(
    `<g class="legend"><rect class="bar recovered" x="${LABEL_WIDTH}" y="${TOP}" width="12" height="12"/>` +
      `<text x="${LABEL_WIDTH + 18}" y="${TOP + 10}">recovered (task still completed)</text>` +
      `<rect class="bar unrecovered" x="${LABEL_WIDTH + 222}" y="${TOP}" width="12" height="12"/>` +
      `<text x="${LABEL_WIDTH + 240}" y="${TOP + 10}">not recovered</text></g>`,
  );
  const ticks: { at: number; label: string }[] = [];
  for (let value = 0; value <= axis.top; value += axis.step) ticks.push({ at: value / axis.top, label: String(value) });
  // The axis helper measures from TOP; shift the whole plot below the legend.
  parts.push(`<g transform="translate(0 ${legendHeight})">`);
  parts.push(horizontalAxis(rows.length, ticks, 'episodes the fault fired in (count)'));
  rows.forEach((row, index) => {
    const y = TOP + index * ROW_HEIGHT;
    const { recovered } = row;
    const share = recovered.rate === null ? 'no episodes' : `${percentText(recovered.rate)} recovered [${percentText(recovered.low)}, ${percentText(recovered.high)}]`;
    const note = `${recovered.successes}/${recovered.n} recovered · fired ${row.fired}×`;
    parts.push(
      `<g class="row" data-key="${escapeXml(row.kind)}" data-fired="${row.fired}" data-episodes="${recovered.n}" data-recovered="${recovered.successes}"${filterAttributes(row.filter)}>`,
    );
    parts.push(`<title>${escapeXml(`${row.kind}: fired ${row.fired} times in ${recovered.n} episodes; ${recovered.successes} still completed (${share}, 95% Wilson interval)`)}</title>`);
    parts.push(rowLabel(row.kind, y));
    const recoveredWidth = scale(recovered.successes);
    parts.push(`<rect class="bar recovered" x="${LABEL_WIDTH}" y="${coordinate(y + 5)}" width="${coordinate(recoveredWidth)}" height="${ROW_HEIGHT - 10}"/>`);
    parts.push(
      `<rect class="bar unrecovered" x="${coordinate(LABEL_WIDTH + recoveredWidth)}" y="${coordinate(y + 5)}" width="${coordinate(scale(recovered.n - recovered.successes))}" height="${ROW_HEIGHT - 10}"/>`,
    );
    parts.push(rowNote(note, y));
    parts.push('</g>');
  });
  parts.push('</g></svg>');
  return figure(id, title, caption, parts.join('\n'));
}

export interface HistogramChart {
  id: string;
  title: string;
  caption: string;
  xTitle: string;
  yTitle: string;
  bins: readonly HistogramBin[];
  empty: string;
}

/** Vertical bars per bin of an integer quantity, count labels on top; count axis on the left. */
export function histogramChart(chart: HistogramChart): string {
  if (chart.bins.length === 0) return figure(chart.id, chart.title, chart.caption, `<p class="empty">${escapeXml(chart.empty)}</p>`);
  const left = 64;
  const right = 24;
  const top = 20;
  const plotHeight = 180;
  const bottom = 52;
  const height = top + plotHeight + bottom;
  const plotWidth = WIDTH - left - right;
  const axis = countAxis(Math.max(...chart.bins.map((bin) => bin.count)));
  const slot = plotWidth / chart.bins.length;
  const barWidth = Math.max(2, slot * 0.8);
  const y = (count: number): number => top + plotHeight - (count / axis.top) * plotHeight;
  const parts = [svgOpen(chart.id, height, chart.title)];
  for (let value = 0; value <= axis.top; value += axis.step) {
    const at = coordinate(y(value));
    parts.push(`<line class="grid" x1="${left}" y1="${at}" x2="${left + plotWidth}" y2="${at}"/>`);
    parts.push(`<text class="tick" x="${left - 6}" y="${coordinate(y(value) + 4)}" text-anchor="end">${value}</text>`);
  }
  parts.push(`<line class="axis" x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}"/>`);
  parts.push(`<line class="axis" x1="${left}" y1="${top + plotHeight}" x2="${left + plotWidth}" y2="${top + plotHeight}"/>`);
  chart.bins.forEach((bin, index) => {
    const label = bin.from === bin.to ? String(bin.from) : `${bin.from}–${bin.to}`;
    const x = left + index * slot + (slot - barWidth) / 2;
    const centre = coordinate(left + index * slot + slot / 2);
    parts.push(`<g class="bin" data-from="${bin.from}" data-to="${bin.to}" data-count="${bin.count}">`);
    parts.push(`<title>${escapeXml(`${label} ${chart.xTitle.replace(/ \(.*\)$/, '')}: ${bin.count} episodes`)}</title>`);
    parts.push(`<rect class="bar" x="${coordinate(x)}" y="${coordinate(y(bin.count))}" width="${coordinate(barWidth)}" height="${coordinate(top + plotHeight - y(bin.count))}"/>`);
    if (bin.count > 0) parts.push(`<text class="count" x="${centre}" y="${coordinate(y(bin.count) - 4)}" text-anchor="middle">${bin.count}</text>`);
    parts.push(`<text class="tick" x="${centre}" y="${top + plotHeight + 16}" text-anchor="middle">${escapeXml(label)}</text>`);
    parts.push('</g>');
  });
  parts.push(`<text class="axis-title" x="${coordinate(left + plotWidth / 2)}" y="${top + plotHeight + 40}" text-anchor="middle">${escapeXml(chart.xTitle)}</text>`);
  parts.push(
    `<text class="axis-title" x="16" y="${coordinate(top + plotHeight / 2)}" text-anchor="middle" transform="rotate(-90 16 ${coordinate(top + plotHeight / 2)})">${escapeXml(chart.yTitle)}</text>`,
  );
  parts.push('</svg>');
  return figure(chart.id, chart.title, chart.caption, parts.join('\n'));
}
