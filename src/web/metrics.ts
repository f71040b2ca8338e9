/**
 * Prometheus metrics (prom-client). Each process counts what it does in its own registry: job runs,
 * durations per phase, LLM tokens and cost, free disk. Workers send a snapshot of theirs with their
 * heartbeat; /metrics sums every live snapshot with prom-client's AggregatorRegistry (made for
 * exactly this: one scrape for many processes), plus what the serving process reads at scrape
 * time from the queue and the store (jobs by state, live accuracy).
 */
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { JobQueue, JobRecord, JobState } from '../queue/queue.js';
import type { LiveAccuracyRow } from '../pipeline/liveAccuracy.js';
import { repoSlug } from '../github/types.js';

export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** Where a job's time goes: waiting in the queue, fetching the repository, the pipeline's runs. */
export type Phase = 'wait' | 'fetch' | 'reproduce' | 'validate' | 'confirm';

export interface ProcessMetrics {
  registry: Registry;
  jobRuns: Counter<'kind' | 'outcome'>;
  phaseSeconds: Histogram<'kind' | 'phase'>;
  llmTokens: Counter<'strategy'>;
  llmCostUsd: Counter<'strategy'>;
  freeDiskBytes: Gauge<'worker'>;
}

export function createProcessMetrics(): ProcessMetrics {
  const registry = new Registry();
  return {
    registry,
    jobRuns: new Counter({ name: 'swt_job_runs_total', help: 'Job attempts that ended, by kind and outcome (done, retrying, failed, cancelled).', labelNames: ['kind', 'outcome'], registers: [registry] }),
    phaseSeconds: new Histogram({
      name: 'swt_job_phase_seconds',
      help: 'Time spent per phase of a job: wait (queued to started), fetch, reproduce, validate, confirm.',
      labelNames: ['kind', 'phase'],
      buckets: [0.05, 0.25, 1, 5, 15, 30, 60, 120, 300, 600, 1800],
      registers: [registry],
    }),
    llmTokens: new Counter({ name: 'swt_llm_tokens_total', help: 'LLM tokens (prompt + completion) spent writing tests, by strategy.', labelNames: ['strategy'], registers: [registry] }),
    llmCostUsd: new Counter({ name: 'swt_llm_cost_usd_total', help: 'LLM cost in USD spent writing tests, by strategy.', labelNames: ['strategy'], registers: [registry] }),
    freeDiskBytes: new Gauge({ name: 'swt_worker_free_disk_bytes', help: "Free bytes on the filesystem of each worker's Docker data root.", labelNames: ['worker'], registers: [registry] }),
  };
}

/** Counts job outcomes and queue waits as this process's workers see them. */
export function observeQueue(queue: JobQueue, m: ProcessMetrics): void {
  queue.on('started', (j: JobRecord) => m.phaseSeconds.observe({ kind: j.kind, phase: 'wait' }, Math.max(0, (Date.now() - Math.max(j.createdAt, j.runAt)) / 1000)));
  for (const outcome of ['done', 'retrying', 'failed', 'cancelled'] as const) queue.on(outcome, (j: JobRecord) => m.jobRuns.inc({ kind: j.kind, outcome }));
}

/** Runs `fn`, recording its duration under `phase`. */
export async function timed<T>(m: ProcessMetrics | undefined, kind: string, phase: Phase, fn: () => Promise<T>): Promise<T> {
  const end = m?.phaseSeconds.startTimer({ kind, phase });
  try {
    return await fn();
  } finally {
    end?.();
  }
}

export function countUsage(m: ProcessMetrics | undefined, strategy: string, usage: { promptTokens: number; completionTokens: number; costUsd: number }): void {
  if (!m) return;
  m.llmTokens.inc({ strategy }, usage.promptTokens + usage.completionTokens);
  m.llmCostUsd.inc({ strategy }, usage.costUsd);
}

/** The text a Prometheus scrape gets: this process, the workers' snapshots, and the shared state. */
export async function renderMetrics(input: { local?: ProcessMetrics; snapshots: MetricsSnapshot[]; counts: Record<JobState, number>; accuracy: LiveAccuracyRow[] }): Promise<{ contentType: string; body: string }> {
  const scrape = new Registry();
  const jobs = new Gauge({ name: 'swt_jobs', help: 'Jobs by state, in the queue shared by every worker.', labelNames: ['state'], registers: [scrape] });
  for (const [state, n] of Object.entries(input.counts)) jobs.set({ state }, n);
  const liveS = new Gauge({ name: 'swt_live_s', help: "Share of merged fixes the bot's reproducing test confirmed (F->P at the merge commit), by repository and strategy.", labelNames: ['repository', 'strategy'], registers: [scrape] });
  const checked = new Gauge({ name: 'swt_live_checked', help: 'Merged fixes whose stored reproduction was run at the merge commit.', labelNames: ['repository', 'strategy'], registers: [scrape] });
  const followUp = new Gauge({ name: 'swt_live_follow_up_rate', help: 'Share of merged gated bot PRs later reverted or fixed again.', labelNames: ['repository', 'strategy'], registers: [scrape] });
  const perIssue = new Gauge({ name: 'swt_cost_per_issue_usd', help: 'LLM cost per issue the bot tried to reproduce.', labelNames: ['repository', 'strategy'], registers: [scrape] });
  for (const r of input.accuracy) {
    const labels = { repository: repoSlug(r), strategy: r.strategy };
    checked.set(labels, r.checked);
    if (r.liveS !== null) liveS.set(labels, r.liveS);
    if (r.followUpRate !== null) followUp.set(labels, r.followUpRate);
    if (r.costPerIssue !== null) perIssue.set(labels, r.costPerIssue);
  }
  const parts: MetricsSnapshot[] = [await scrape.getMetricsAsJSON(), ...input.snapshots];
  if (input.local) parts.push(await input.local.registry.getMetricsAsJSON());
  const merged = AggregatorRegistry.aggregate(parts);
  return { contentType: merged.contentType, body: await merged.metrics() };
}
