/**
 * GET /swt (the status page), GET /swt/reproduction/<owner>/<repo>/<issue> (the stored reproducing
 * test, whole, where a clipped comment points) and GET /metrics (Prometheus), read-only, behind SWT_STATUS_TOKEN.
 * What they show is read where every process writes it: the queue, the store and the workers'
 * heartbeats (Redis with REDIS_URL, else this process's SQLite and memory).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Heartbeats } from './heartbeat.js';
import { liveAccuracyRows, type JobOutcome, type Store } from '../store/types.js';
import type { JobQueue, JobRecord } from '../queue/queue.js';
import { authorized } from './auth.js';
import { renderMetrics, type ProcessMetrics } from './metrics.js';
import { errorLine } from '../util/errors.js';
import { renderStatusPage, type StatusData, type StatusJobRow } from './statusPage.js';
import { repoSlug } from '../github/types.js';

export interface StatusSource {
  engine: 'sqlite' | 'redis';
  queue: JobQueue;
  store: Store;
  heartbeats: Heartbeats;
  /** This process's own metrics; its heartbeat (selfId) is then not counted a second time. */
  metrics?: ProcessMetrics;
  selfId?: string;
  /** SWT_STATUS_TOKEN; unset: both pages answer 401. */
  token: string | undefined;
}

/** Repository and target of a job, from the payload shapes of the job kinds in jobs/. */
function targetOf(job: JobRecord): { repository: string | null; target: string | null } {
  const p = job.payload as { target?: { owner?: string; repo?: string }; issue?: number; pr?: number; number?: number; issues?: number[]; pull?: { number?: number } } | null;
  const t = p?.target;
  const repository = t?.owner && t.repo ? repoSlug({ owner: t.owner, repo: t.repo }) : null;
  const n = p?.pr ?? p?.issue ?? p?.number ?? p?.pull?.number;
  const target = typeof n === 'number' ? `#${n}` : Array.isArray(p?.issues) && p.issues.length ? p.issues.map((i) => `#${i}`).join(' ') : null;
  return { repository, target };
}

export function jobRow(job: JobRecord, outcome: JobOutcome | undefined): StatusJobRow {
  const t = targetOf(job);
  return {
    id: job.id,
    kind: job.kind,
    state: job.state,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    error: job.error,
    repository: outcome ? repoSlug(outcome) : t.repository,
    target: outcome?.target ?? t.target,
    verdict: outcome?.verdict ?? null,
    costUsd: outcome ? outcome.costUsd : null,
    wallMs: outcome ? outcome.wallMs : null,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
  };
}

export async function collectStatus(src: StatusSource, recent = 50): Promise<StatusData> {
  const [counts, jobs, accuracy, workers] = await Promise.all([src.queue.counts(), src.queue.recent(recent), liveAccuracyRows(src.store), src.heartbeats.list()]);
  const outcomes = await src.store.outcomes(jobs.map((j) => j.id));
  return {
    generatedAt: Date.now(),
    engine: src.engine,
    counts,
    jobs: jobs.map((j) => jobRow(j, outcomes.get(j.id))),
    accuracy,
    workers: workers.map(({ metrics: _m, ...w }) => w),
  };
}

async function metricsText(src: StatusSource): Promise<{ contentType: string; body: string }> {
  const [counts, accuracy, workers] = await Promise.all([src.queue.counts(), liveAccuracyRows(src.store), src.heartbeats.list()]);
  const snapshots = workers.filter((w) => w.metrics && w.id !== src.selfId).map((w) => w.metrics!);
  return renderMetrics({ local: src.metrics, snapshots, counts, accuracy });
}

const UNAUTHORIZED = 'unauthorized: send the SWT_STATUS_TOKEN as "Authorization: Bearer <token>" (never in the URL)\n';

/** A Probot addHandler handler: true when it answered the request. */
export function statusHandler(src: StatusSource, onError?: (e: unknown) => void) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = (req.url ?? '').split('?')[0]!.replace(/\/+$/, '');
    // The whole reproducing test of an issue, where a comment clipped to GitHub's limit points.
    const reproduction = /^\/swt\/reproduction\/([\w.-]+)\/([\w.-]+)\/(\d+)$/.exec(path);
    if (path !== '/swt' && path !== '/metrics' && !reproduction) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('read-only\n');
      return true;
    }
    if (!authorized(req, src.token)) {
      res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer realm="swt-bot"', 'cache-control': 'no-store' }).end(UNAUTHORIZED);
      return true;
    }
    void (async () => {
      try {
        if (reproduction) {
          const rep = await src.store.latestReproduction({ owner: reproduction[1]!, repo: reproduction[2]! }, Number(reproduction[3]));
          if (!rep) res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end('no reproducing test stored for this issue\n');
          else res.writeHead(200, { 'content-type': 'text/x-diff; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }).end(req.method === 'HEAD' ? undefined : rep.testPatch);
        } else if (path === '/metrics') {
          const m = await metricsText(src);
          res.writeHead(200, { 'content-type': m.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : m.body);
        } else {
          const html = renderStatusPage(await collectStatus(src));
          res
            .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'", 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' })
            .end(req.method === 'HEAD' ? undefined : html);
        }
      } catch (e) {
        onError?.(e);
        if (!res.headersSent) res.writeHead(503, { 'content-type': 'text/plain' }).end(`status unavailable: ${errorLine(e)}\n`);
      }
    })();
    return true;
  };
}
