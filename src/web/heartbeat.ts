/**
 * Workers' heartbeats: every few seconds each worker says who it is, which lanes it works, what
 * its Docker engine looks like (free disk, images) and sends its metrics snapshot. In Redis each
 * report expires after three missed beats, so a dead worker drops off the status page and its
 * counters off /metrics. One process alone (SQLite) keeps its own report in memory.
 */
import type { Redis } from 'ioredis';
import type { MetricsSnapshot } from './metrics.js';
import type { DockerHostReport } from './dockerHost.js';

export interface WorkerReport {
  /** host/pid/random, as the queue names its owner. */
  id: string;
  host: string;
  pid: number;
  role: string;
  kinds: string[];
  startedAt: number;
  seenAt: number;
  docker: DockerHostReport | { error: string };
  /** Environment images the last eviction removed (SWT_ENV_CACHE_GB). */
  evicted: string[];
  metrics?: MetricsSnapshot;
}

export interface Heartbeats {
  report(r: WorkerReport): Promise<void>;
  list(): Promise<WorkerReport[]>;
}

export class RedisHeartbeats implements Heartbeats {
  readonly #redis: Redis;
  readonly #p: string;
  readonly #ttlMs: number;

  constructor(redis: Redis, opts: { prefix?: string; ttlMs?: number } = {}) {
    this.#redis = redis;
    this.#p = `${opts.prefix ?? 'swt'}:worker`;
    this.#ttlMs = opts.ttlMs ?? 60_000;
  }

  async report(r: WorkerReport): Promise<void> {
    await this.#redis
      .multi()
      .set(`${this.#p}:${r.id}`, JSON.stringify(r), 'PX', this.#ttlMs)
      .zadd(`${this.#p}s`, r.seenAt, r.id)
      .zremrangebyscore(`${this.#p}s`, '-inf', Date.now() - this.#ttlMs)
      .exec();
  }

  async list(): Promise<WorkerReport[]> {
    const ids = await this.#redis.zrange(`${this.#p}s`, 0, -1);
    if (ids.length === 0) return [];
    const rows = await this.#redis.mget(ids.map((id) => `${this.#p}:${id}`));
    return rows.flatMap((s) => (s ? [JSON.parse(s) as WorkerReport] : [])).sort((a, b) => a.id.localeCompare(b.id));
  }
}

export class LocalHeartbeats implements Heartbeats {
  readonly #reports = new Map<string, WorkerReport>();

  async report(r: WorkerReport): Promise<void> {
    this.#reports.set(r.id, r);
  }

  async list(): Promise<WorkerReport[]> {
    return [...this.#reports.values()];
  }
}

/**
 * Beats now and every `intervalMs` until stopped; a failed beat is logged by `onError` and the next
 * one tries again. `stop` waits for a report being written, so its owner may then close the
 * connection; a beat still collecting (a Docker engine's disk usage can take seconds) is dropped
 * when it ends, and is not waited for: a closing process neither waits on it nor logs its end.
 */
export function startHeartbeat(opts: { heartbeats: Heartbeats; intervalMs: number; collect: () => Promise<WorkerReport>; onError?: (e: unknown) => void }): { beat(): Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let writing: Promise<void> | undefined;
  let stopped = false;
  const beat = () =>
    stopped
      ? Promise.resolve()
      : (running ??= (async () => {
          try {
            const report = await opts.collect();
            if (stopped) return;
            await (writing = opts.heartbeats.report(report));
          } catch (e) {
            if (!stopped) opts.onError?.(e);
          } finally {
            running = writing = undefined;
          }
        })());
  void beat();
  const timer = setInterval(() => void beat(), opts.intervalMs);
  timer.unref();
  return {
    beat,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await writing?.catch(() => undefined);
    },
  };
}
