/**
 * report.html: one self-contained page (inline CSS and SVG, no script, no network) with the summary
 * in the layout of SWT-bench's Tables 2 and 3, charts of success by repository and time per phase,
 * and one row per instance whose test patch, failures and coverage open in place. Pure.
 */
import escape from 'escape-html';
import { PHASES, type PhaseTimes } from '../eval/phases.js';
import type { EvalReport, InstanceResult } from '../eval/report.js';
import { barChart, type Bar } from './svg.js';

export interface ReportPage {
  title: string;
  report: EvalReport;
  results: readonly InstanceResult[];
  /** Shown in the header; the caller's clock, so rendering stays pure. */
  generatedAt?: string;
}

export const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2937;margin:0;background:#f8fafc}
header{background:#0f172a;color:#f8fafc;padding:18px 28px}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#cbd5e1}
main{padding:8px 28px 40px}h2{font-size:17px;margin:26px 0 10px}h3{font-size:14px;margin:0 0 8px;color:#334155}
table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0001}caption{caption-side:top;text-align:left;color:#475569;padding:4px 0;font-size:12px}
th,td{padding:6px 10px;border-bottom:1px solid #e2e8f0;text-align:left;vertical-align:top}th{background:#f1f5f9;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.metrics{margin-right:24px;display:inline-table}.cards{display:flex;flex-wrap:wrap;gap:18px}
.card{background:#fff;padding:14px 16px;box-shadow:0 1px 2px #0001;border-radius:6px}
.chart text{font-size:12px;fill:#334155}.chart .big{font-size:22px;font-weight:600}
.ok{color:#15803d;font-weight:600}.no{color:#b91c1c}.muted{color:#94a3b8}.err{color:#b91c1c;max-width:340px}
tr.detail td{background:#fbfdff;border-bottom:2px solid #e2e8f0}details summary{cursor:pointer;color:#2563eb}
pre{background:#0f172a;color:#e2e8f0;padding:10px;overflow:auto;max-height:360px;font-size:12px;border-radius:4px}
.fail{white-space:pre-wrap;font:12px/1.35 ui-monospace,monospace;background:#fef2f2;border-left:3px solid #ef4444;padding:6px;margin:4px 0}
.lines span{display:inline-block;margin:1px 3px;padding:0 4px;border-radius:3px;font:12px ui-monospace,monospace}
.lines .hit{background:#dcfce7}.lines .miss{background:#fee2e2}.legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
`;

const PHASE_NAMES: Record<keyof PhaseTimes, string> = {
  imageBuildMs: 'image builds',
  installMs: 'installs',
  testRunsMs: 'test runs',
  generationMs: 'generation',
  coverageMs: 'coverage',
};
const PHASE_COLORS: Record<keyof PhaseTimes, string> = {
  imageBuildMs: '#6366f1',
  installMs: '#a855f7',
  testRunsMs: '#0ea5e9',
  generationMs: '#f59e0b',
  coverageMs: '#10b981',
};

export const fmtPct = (v: number | null | undefined): string => (v === null || v === undefined ? '—' : v.toFixed(1));
export const seconds = (ms: number): string => (ms >= 100_000 ? `${Math.round(ms / 1000)} s` : `${(ms / 1000).toFixed(1)} s`);

/** The name a run goes by in the tables: its model when every prediction names the same one. */
export function methodName(results: readonly InstanceResult[], fallback: string): string {
  const models = new Set(results.map((r) => r.model).filter(Boolean));
  return models.size === 1 ? [...models][0]! : fallback;
}

export function table2(rows: Array<{ name: string; report: EvalReport }>): string {
  const cells = rows
    .map(({ name, report: r }) => `<tr><td>${escape(name)}</td>${[r.W, r.S, r.F2X, r.F2P, r.P2P].map((v) => `<td class="num">${fmtPct(v)}</td>`).join('')}</tr>`)
    .join('');
  return `<table id="table2" class="metrics"><caption>Rates in % over all instances (SWT-bench Table 2)</caption><thead><tr><th>Method</th><th class="num">W</th><th class="num">S</th><th class="num">F→×</th><th class="num">F→P</th><th class="num">P→P</th></tr></thead><tbody>${cells}</tbody></table>`;
}

export function table3(rows: Array<{ name: string; report: EvalReport }>): string {
  const cells = rows
    .map(({ name, report: r }) => `<tr><td>${escape(name)}</td>${[r.dC, r.dC_S, r.dC_notS].map((v) => `<td class="num">${fmtPct(v)}</td>`).join('')}<td class="num">${r.dC === null ? '—' : r.dC_instances}</td></tr>`)
    .join('');
  return `<table id="table3" class="metrics"><caption>Change coverage ΔC in % (SWT-bench Table 3)</caption><thead><tr><th>Method</th><th class="num">ΔC all</th><th class="num">ΔC S</th><th class="num">ΔC ¬S</th><th class="num">n</th></tr></thead><tbody>${cells}</tbody></table>`;
}

function repoChart(results: readonly InstanceResult[]): string {
  const byRepo = new Map<string, InstanceResult[]>();
  for (const r of results) {
    const repo = r.repo ?? r.instance_id.replace(/-[^-]*$/, '');
    byRepo.set(repo, [...(byRepo.get(repo) ?? []), r]);
  }
  const bars: Bar[] = [...byRepo.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([repo, rows]) => {
      const s = rows.filter((r) => r.success).length;
      const applied = rows.filter((r) => r.applied && !r.success && !r.error).length;
      const errors = rows.filter((r) => r.error).length;
      const rest = rows.length - s - applied - errors;
      return {
        label: repo,
        segments: [
          { value: s, color: '#16a34a', title: `${s} successful (S)` },
          { value: applied, color: '#93c5fd', title: `${applied} applied, not S` },
          { value: rest, color: '#cbd5e1', title: `${rest} not applied` },
          { value: errors, color: '#ef4444', title: `${errors} errors` },
        ],
        note: `S ${s}/${rows.length}`,
      };
    });
  const max = Math.max(1, ...bars.map((b) => b.segments.reduce((a, s) => a + s.value, 0)));
  const legend = `<div class="legend"><span style="background:#16a34a"></span>S<span style="background:#93c5fd"></span>applied, not S<span style="background:#cbd5e1"></span>not applied<span style="background:#ef4444"></span>error</div>`;
  return barChart(bars, max, { title: 'Success by repository', id: 'chart-repos' }) + legend;
}

function phaseChart(phases: PhaseTimes): string {
  const total = PHASES.reduce((a, p) => a + phases[p], 0);
  const bars: Bar[] = PHASES.map((p) => ({
    label: PHASE_NAMES[p],
    segments: [{ value: phases[p], color: PHASE_COLORS[p], title: `${PHASE_NAMES[p]}: ${seconds(phases[p])}` }],
    note: `${seconds(phases[p])} (${total ? Math.round((100 * phases[p]) / total) : 0}%)`,
  }));
  return barChart(bars, Math.max(1, ...PHASES.map((p) => phases[p])), { title: 'Time per phase', id: 'chart-phases' });
}

function coverageCell(r: InstanceResult): string {
  if (r.coverageError) return `<span class="no" title="${escape(r.coverageError)}">error</span>`;
  const c = r.coverage;
  if (!c) return '<span class="muted">—</span>';
  if (c.dC === null) return '<span class="muted" title="no executable changed line: left out of ΔC">left out</span>';
  return `${(100 * c.dC).toFixed(1)}% <span class="muted">(${c.covered}/${c.lines})</span>`;
}

function linesList(c: NonNullable<InstanceResult['coverage']>): string {
  const side = (name: 'removed' | 'added') => {
    const hit = c.coveredLines[name];
    const parts = Object.entries(c.executable[name]).map(
      ([file, lines]) =>
        `<div>${escape(name)} in <code>${escape(file)}</code>: ${lines.map((l) => `<span class="${hit[file]?.includes(l) ? 'hit' : 'miss'}">${l}</span>`).join('')}</div>`,
    );
    return parts.join('');
  };
  const what = c.executableBy === 'reference' ? 'lines the original or golden tests execute' : 'changed code lines';
  return `<div class="lines"><p>Executable (${escape(what)}), green where the tests raise the count (${escape(c.counter)}):</p>${side('removed')}${side('added')}</div>`;
}

function details(r: InstanceResult): string {
  const parts: string[] = [];
  if (r.reproduction) parts.push(`<p>Generation: ${escape(r.reproduction.strategy)} — ${escape(r.reproduction.status)}: ${escape(r.reproduction.reason)}</p>`);
  const failing = r.tests.filter((t) => t.baseFailure || t.headFailure);
  if (r.tests.length) {
    parts.push(
      `<h4>Tests</h4><ul>${r.tests
        .map(
          (t) =>
            `<li><code>${escape(t.id)}</code> ${escape(t.transition)}${t.flaky ? ` (flaky${t.runs ? `: failed ${t.runs.base.failed + t.runs.head.failed} of ${t.runs.base.runs + t.runs.head.runs} runs` : ''}${t.orderDependent ? `; ${escape(t.orderDependent)}` : ''})` : ''}${t.preexisting ? ' (pre-existing)' : ''}` +
            (t.baseFailure ? `<div class="fail">before the fix: ${escape(t.baseFailure)}</div>` : '') +
            (t.headFailure ? `<div class="fail">after the fix: ${escape(t.headFailure)}</div>` : '') +
            '</li>',
        )
        .join('')}</ul>`,
    );
  }
  if (r.coverage && r.coverage.lines > 0) parts.push(linesList(r.coverage));
  if (r.testPatch) parts.push(`<h4>Test patch</h4><pre>${escape(r.testPatch)}</pre>`);
  if (r.warnings?.length) parts.push(`<h4>Warnings</h4><ul>${r.warnings.map((w) => `<li>${escape(w)}</li>`).join('')}</ul>`);
  if (r.phases) parts.push(`<p class="muted">${PHASES.map((p) => `${PHASE_NAMES[p]} ${seconds(r.phases![p])}`).join(' · ')}</p>`);
  if (!parts.length) return '<span class="muted">nothing to show</span>';
  const label = `${r.testPatch ? 'test patch' : 'details'}${failing.length ? `, ${failing.length} failure excerpt(s)` : ''}${r.coverage?.lines ? ', covered lines' : ''}`;
  return `<details><summary>${escape(label)}</summary>${parts.join('')}</details>`;
}

function instanceRows(results: readonly InstanceResult[]): string {
  const mark = (b: boolean) => (b ? '<span class="ok">✓</span>' : '<span class="muted">✗</span>');
  return results
    .map((r) => {
      const c = { F2P: 0, F2F: 0, P2P: 0, P2F: 0 };
      for (const t of r.tests) if (!t.preexisting) c[t.transition]++;
      return (
        `<tr class="instance" id="i-${escape(r.instance_id)}"><td><code>${escape(r.instance_id)}</code></td><td>${escape(r.repo ?? '')}</td>` +
        `<td>${mark(r.applied)}</td><td>${mark(r.success)}</td>` +
        `${(['F2P', 'F2F', 'P2P', 'P2F'] as const).map((k) => `<td class="num">${c[k] || '<span class="muted">0</span>'}</td>`).join('')}` +
        `<td class="num">${coverageCell(r)}</td><td class="err">${r.error ? escape(r.error) : ''}</td><td class="num">${seconds(r.durationMs)}</td></tr>` +
        `<tr class="detail"><td colspan="11">${details(r)}</td></tr>`
      );
    })
    .join('');
}

export function page(title: string, body: string, generatedAt?: string, subtitle = ''): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escape(title)}</title><style>${STYLE}</style></head><body>` +
    `<header><h1>${escape(title)}</h1><p>${escape(subtitle)}${generatedAt ? ` · ${escape(generatedAt)}` : ''}</p></header><main>${body}</main></body></html>\n`
  );
}

export function renderReportHtml(p: ReportPage): string {
  const r = p.report;
  const name = methodName(p.results, p.title.replace(/^swt eval:\s*/, ''));
  const total = PHASES.reduce((a, k) => a + r.phases[k], 0);
  const body =
    `<section id="summary"><h2>Summary</h2>${table2([{ name, report: r }])}${table3([{ name, report: r }])}` +
    `<p>${r.instances} instances, ${r.errors} errors · environment images built ${r.images.built}, reused ${r.images.reused} · time across phases ${seconds(total)}</p></section>` +
    `<section id="charts" class="cards"><div class="card"><h3>Success by repository</h3>${repoChart(p.results)}</div>` +
    `<div class="card"><h3>Time per phase</h3>${phaseChart(r.phases)}</div></section>` +
    `<section id="instances"><h2>Instances</h2><table id="instance-table"><thead><tr><th>Instance</th><th>Repository</th><th>W</th><th>S</th>` +
    `<th class="num">F→P</th><th class="num">F→F</th><th class="num">P→P</th><th class="num">P→F</th><th class="num">ΔC</th><th>Error</th><th class="num">Time</th></tr></thead>` +
    `<tbody>${instanceRows(p.results)}</tbody></table></section>`;
  return page(p.title, body, p.generatedAt, `${r.instances} instances`);
}
