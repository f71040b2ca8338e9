/**
 * The status page, rendered on the server: one self-contained HTML document (inline CSS, no
 * script, nothing from a CDN). Pure: data in, HTML out; every value is escaped.
 */
import escape from 'escape-html';
import type { WorkerReport } from './heartbeat.js';
import type { JobState } from '../queue/queue.js';
import { accuracyRowsWithTotals, percent, usd, type LiveAccuracyRow } from '../pipeline/liveAccuracy.js';
import { repoSlug } from '../github/types.js';

export interface StatusJobRow {
  id: string;
  kind: string;
  state: JobState;
  attempts: number;
  maxAttempts: number;
  error: string | null;
  repository: string | null;
  target: string | null;
  verdict: string | null;
  costUsd: number | null;
  wallMs: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface StatusData {
  generatedAt: number;
  engine: 'sqlite' | 'redis';
  counts: Record<JobState, number>;
  jobs: StatusJobRow[];
  accuracy: LiveAccuracyRow[];
  workers: WorkerReport[];
}

const esc = (s: unknown) => escape(String(s ?? ''));

export function when(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + 'Z';
}

export function duration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${String(s % 60).padStart(2, '0')} s` : `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

export function bytes(n: number | null): string {
  if (n === null) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) (v /= 1000), i++;
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header{background:#24292f;color:#fff;padding:12px 24px}header h1{font-size:18px;margin:0}header p{margin:2px 0 0;color:#c9d1d9;font-size:12px}
main{padding:16px 24px;max-width:1200px}section{background:#fff;border:1px solid #d0d7de;border-radius:6px;margin:0 0 16px;padding:12px 16px}
h2{font-size:15px;margin:0 0 8px}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eaeef2;vertical-align:top}
th{font-weight:600;background:#f6f8fa}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap}
.tiles{display:flex;gap:12px;flex-wrap:wrap}.tile{border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;min-width:90px}
.tile b{display:block;font-size:22px}.tile span{color:#57606a;font-size:12px}
.state{border-radius:10px;padding:1px 8px;font-size:12px}.queued{background:#ddf4ff}.running{background:#fff8c5}.done{background:#dafbe1}.failed{background:#ffebe9}.cancelled{background:#eaeef2}
.err{color:#82071e;font-size:12px}.muted{color:#57606a}tr.total td{font-weight:600}
`;

function stateTag(s: JobState): string {
  return `<span class="state ${s}">${esc(s)}</span>`;
}

function queueSection(d: StatusData): string {
  const tile = (label: string, n: number, id: string) => `<div class="tile" data-testid="count-${id}"><b>${n}</b><span>${esc(label)}</span></div>`;
  return `<section id="queue"><h2>Queue</h2><div class="tiles">
${tile('waiting', d.counts.queued, 'waiting')}${tile('running', d.counts.running, 'running')}${tile('failed', d.counts.failed, 'failed')}${tile('done', d.counts.done, 'done')}${tile('cancelled', d.counts.cancelled, 'cancelled')}
</div></section>`;
}

function workersSection(d: StatusData): string {
  if (d.workers.length === 0) return `<section id="workers"><h2>Workers</h2><p class="muted">No worker has reported in the last minute.</p></section>`;
  const rows = d.workers
    .map((w) => {
      const dk = 'error' in w.docker ? undefined : w.docker;
      return `<tr><td>${esc(w.id)}</td><td>${esc(w.role)}</td><td>${esc(w.kinds.join(', '))}</td><td>${dk ? esc(`${dk.location} (Docker ${dk.version})`) : `<span class="err">${esc((w.docker as { error: string }).error)}</span>`}</td><td class="num">${dk ? bytes(dk.freeDiskBytes) : '–'}</td><td class="num">${dk ? bytes(dk.imagesBytes) : '–'}</td><td>${esc(when(w.seenAt))}</td></tr>`;
    })
    .join('\n');
  return `<section id="workers"><h2>Workers</h2><table><thead><tr><th>worker</th><th>role</th><th>lanes</th><th>Docker engine</th><th class="num">free disk</th><th class="num">images</th><th>last seen</th></tr></thead><tbody>
${rows}
</tbody></table></section>`;
}

function jobsSection(d: StatusData): string {
  if (d.jobs.length === 0) return `<section id="jobs"><h2>Recent jobs</h2><p class="muted">No job yet.</p></section>`;
  const rows = d.jobs
    .map(
      (j) => `<tr data-job="${esc(j.id)}"><td class="num">${esc(j.id)}</td><td>${esc(j.kind)}</td><td>${esc(j.repository ?? '–')}</td><td>${esc(j.target ?? '–')}</td><td>${stateTag(j.state)}${j.attempts > 1 ? ` <span class="muted">attempt ${j.attempts}/${j.maxAttempts}</span>` : ''}${j.error && j.state !== 'done' ? `<div class="err">${esc(j.error)}</div>` : ''}</td><td>${esc(j.verdict ?? '–')}</td><td>${esc(when(j.createdAt))}</td><td class="num">${duration(j.wallMs ?? (j.state === 'done' || j.state === 'failed' ? j.updatedAt - j.createdAt : null))}</td><td class="num">${j.costUsd === null ? '–' : usd(j.costUsd)}</td></tr>`,
    )
    .join('\n');
  return `<section id="jobs"><h2>Recent jobs</h2><table><thead><tr><th class="num">id</th><th>kind</th><th>repository</th><th>target</th><th>state</th><th>verdict</th><th>queued at</th><th class="num">time</th><th class="num">cost</th></tr></thead><tbody>
${rows}
</tbody></table></section>`;
}

function accuracyRow(r: LiveAccuracyRow, total = false): string {
  return `<tr${total ? ' class="total"' : ''} data-repo="${esc(repoSlug(r))}" data-strategy="${esc(r.strategy)}"><td>${esc(repoSlug(r))}</td><td>${esc(r.strategy)}</td><td class="num">${r.confirmed} / ${r.checked}</td><td class="num">${percent(r.liveS)}</td><td class="num">${r.followedUp} / ${r.gatedMerged}</td><td class="num">${percent(r.followUpRate)}</td><td class="num">${r.issues}</td><td class="num">${usd(r.costPerIssue)}</td></tr>`;
}

function accuracySection(d: StatusData): string {
  const head = `<thead><tr><th>repository</th><th>strategy</th><th class="num">confirmed / merged fixes checked</th><th class="num">live S</th><th class="num">reverted or fixed again / gated bot PRs merged</th><th class="num">rate</th><th class="num">issues</th><th class="num">cost per issue</th></tr></thead>`;
  const body = d.accuracy.length ? accuracyRowsWithTotals(d.accuracy).map(({ row, total }) => accuracyRow(row, total)).join('\n') : `<tr><td colspan="8" class="muted">No merged fix of a reproduced issue yet.</td></tr>`;
  return `<section id="accuracy"><h2>Live accuracy</h2><p class="muted">When a PR that closes a reproduced issue is merged, the bot runs its stored test at the PR's base and at the merge commit: F→P confirms the reproduction.</p><table>${head}<tbody>
${body}
</tbody></table></section>`;
}

export function renderStatusPage(d: StatusData): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>swt-bot status</title><style>${CSS}</style></head>
<body><header><h1>swt-bot status</h1><p>Generated ${esc(when(d.generatedAt))} · queue on ${d.engine === 'redis' ? 'Redis (BullMQ)' : 'SQLite'} · read-only</p></header>
<main>
${queueSection(d)}
${workersSection(d)}
${jobsSection(d)}
${accuracySection(d)}
</main></body></html>
`;
}
