/**
 * Two evaluation runs side by side: their metrics in the layout of Tables 2 and 3, and which
 * instances each alone solves (S), as in SWT-bench's Fig. 6 overlap. Pure: text and HTML.
 */
import escape from 'escape-html';
import type { RunData } from '../eval/loadRun.js';
import type { EvalReport, InstanceResult } from '../eval/report.js';
import { fmtPct, methodName, page, table2, table3 } from './html.js';
import { overlapChart } from './svg.js';

export interface Comparison {
  names: [string, string];
  reports: [EvalReport, EvalReport];
  onlyA: string[];
  onlyB: string[];
  both: string[];
  /** Instances in both runs, with S and ΔC (0–1) of each. */
  rows: Array<{ id: string; a?: InstanceResult; b?: InstanceResult }>;
}

export function compareEvalRuns(a: RunData, b: RunData): Comparison {
  const solved = (r: RunData) => new Set(r.results.filter((x) => x.success).map((x) => x.instance_id));
  const sa = solved(a);
  const sb = solved(b);
  const ids = [...new Set([...a.results, ...b.results].map((r) => r.instance_id))].sort();
  const byId = (r: RunData) => new Map(r.results.map((x) => [x.instance_id, x]));
  const ma = byId(a);
  const mb = byId(b);
  let na = methodName(a.results, a.label);
  let nb = methodName(b.results, b.label);
  if (na === nb) [na, nb] = [`${na} (A)`, `${nb} (B)`];
  return {
    names: [na, nb],
    reports: [a.report, b.report],
    onlyA: ids.filter((i) => sa.has(i) && !sb.has(i)),
    onlyB: ids.filter((i) => sb.has(i) && !sa.has(i)),
    both: ids.filter((i) => sa.has(i) && sb.has(i)),
    rows: ids.map((id) => ({ id, a: ma.get(id), b: mb.get(id) })),
  };
}

const dc = (r?: InstanceResult) => (r?.coverage?.dC === null || r?.coverage?.dC === undefined ? '—' : (100 * r.coverage.dC).toFixed(1));
const s = (r?: InstanceResult) => (!r ? 'absent' : r.error ? 'error' : r.success ? 'S' : '-');

function pad(cells: string[][]): string {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

export function renderCompareText(c: Comparison): string {
  const [a, b] = c.reports;
  const metrics = pad([
    ['', 'W', 'S', 'F2X', 'F2P', 'P2P', 'dC', 'dC_S', 'dC_notS'],
    ...[a, b].map((r, i) => [c.names[i]!, ...[r.W, r.S, r.F2X, r.F2P, r.P2P, r.dC, r.dC_S, r.dC_notS].map(fmtPct)]),
  ]);
  const list = (title: string, ids: string[]) => `${title} (${ids.length}):${ids.length ? `\n  ${ids.join('\n  ')}` : ' none'}`;
  return [
    metrics,
    '',
    list(`solved only by ${c.names[0]}`, c.onlyA),
    list(`solved only by ${c.names[1]}`, c.onlyB),
    `solved by both: ${c.both.length}; by either: ${c.onlyA.length + c.onlyB.length + c.both.length}`,
    '',
  ].join('\n');
}

export function renderCompareHtml(c: Comparison, generatedAt?: string): string {
  const runs = c.reports.map((report, i) => ({ name: c.names[i]!, report }));
  const list = (ids: string[]) => (ids.length ? `<ul>${ids.map((i) => `<li><code>${escape(i)}</code></li>`).join('')}</ul>` : '<p class="muted">none</p>');
  const rows = c.rows
    .map(
      ({ id, a, b }) =>
        `<tr class="instance"><td><code>${escape(id)}</code></td><td>${escape(s(a))}</td><td>${escape(s(b))}</td><td class="num">${dc(a)}</td><td class="num">${dc(b)}</td></tr>`,
    )
    .join('');
  const body =
    `<section id="summary"><h2>Metrics</h2>${table2(runs)}${table3(runs)}</section>` +
    `<section class="cards"><div class="card"><h3>Instances solved (S)</h3>${overlapChart({ name: c.names[0], only: c.onlyA.length }, { name: c.names[1], only: c.onlyB.length }, c.both.length, 'chart-overlap')}</div>` +
    `<div class="card" id="only-a"><h3>Only ${escape(c.names[0])}</h3>${list(c.onlyA)}</div><div class="card" id="only-b"><h3>Only ${escape(c.names[1])}</h3>${list(c.onlyB)}</div></section>` +
    `<section><h2>Instances</h2><table id="instance-table"><thead><tr><th>Instance</th><th>${escape(c.names[0])}</th><th>${escape(c.names[1])}</th><th class="num">ΔC A</th><th class="num">ΔC B</th></tr></thead><tbody>${rows}</tbody></table></section>`;
  return page(`swt eval: ${c.names[0]} vs ${c.names[1]}`, body, generatedAt, `${c.rows.length} instances`);
}
