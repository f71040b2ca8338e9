/**
 * JobQueue on Redis: BullMQ moves the work (one BullMQ queue per kind, delays, locks, stalled-job
 * detection when a worker dies), and a record per job in a Redis hash keeps the JobQueue meaning
 * that BullMQ lacks, changed only by the Lua scripts of bullScripts.ts, so every worker sees one truth:
 *
 * - keys: `key → id` stays after the job ends, so a completed job still blocks its key (BullMQ's
 *   own jobId dedup ends when a finished job is removed);
 * - groups: a newer job cancels the group's queued jobs and flags its running ones; the flag is
 *   published, and also polled, so a running job's signal aborts in whichever process runs it;
 * - attempts: counted by the record; a retry is the job moved back to delayed with our backoff,
 *   and an attempt lost with its worker is not counted (the record shows a recovery instead);
 * - limits: a job whose limit key is full (redisLimit.ts) goes back to delayed without an attempt.
 *
 * A record left queued without a BullMQ job (a crash between the two writes, a Redis that lost
 * data) is put back by the reconciler that every worker runs. Scripts build keys from a prefix:
 * one Redis server (or a primary with replicas), not Redis Cluster.
 */
import { errorLine } from '../util/errors.js';
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../util/logger.js';
import {
  JOB_STATES,
  pruneDue,
  SUPERSEDED,
  type EnqueueResult,
  type JobEvent,
  type JobHandler,
  type JobQueue,
  type JobRecord,
  type BecomeSpec,
  type JobSpec,
  type JobState,
} from './queue.js';
import { runAttempt, type AttemptOutcome } from './attempt.js';
import { defineCommands, toRecord, type Commands } from './bullScripts.js';
import { RedisLimit } from './redisLimit.js';

export interface BullQueueOptions {
  /** Key prefix (SWT_REDIS_PREFIX); BullMQ's own keys live under `<prefix>:bull`. */
  prefix?: string;
  /** BullMQ's job lock: a worker silent this long has lost its job (default 30 s). */
  lockDurationMs?: number;
  /** How often workers look for jobs whose lock ran out (default 15 s). */
  stalledIntervalMs?: number;
  /** A job resumed this many times after its worker died is failed instead (default 5). */
  maxRecoveries?: number;
  backoff?: { baseMs?: number; maxMs?: number };
  /** Lease of a per-key limit slot, renewed while the job runs (default 30 s). */
  limitLeaseMs?: number;
  /** How long a job whose limit is full waits before it is tried again (default 1 s, ±50 %). */
  limitRetryMs?: number;
  /** How often records without a BullMQ job are put back (default 15 s). */
  reconcileMs?: number;
  /** Finished jobs are dropped this long after they last changed (default 30 days, as the SQLite queue). */
  retentionMs?: number;
  logger?: Logger;
}

const bullId = (id: string) => `j${id}`;
const TERMINAL = new Set<JobState>(['done', 'failed', 'cancelled']);
const PRUNE_BATCH = 500;

interface Registered {
  handler: JobHandler<unknown>;
  concurrency: number;
  worker?: Worker;
}

export class BullJobQueue implements JobQueue {
  readonly #redis: Redis & Commands;
  readonly #p: string;
  readonly #opts: Required<Omit<BullQueueOptions, 'logger' | 'backoff' | 'prefix'>> & Pick<BullQueueOptions, 'logger' | 'backoff'>;
  readonly #limit: RedisLimit;
  readonly #owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  readonly #kinds = new Map<string, Registered>();
  readonly #producers = new Map<string, Queue>();
  readonly #live = new Map<string, AbortController>();
  readonly #events = new EventEmitter();
  #subscriber: Redis | undefined;
  #reconcileTimer: NodeJS.Timeout | undefined;
  #started = false;

  /** `redis`: a connection made by connectRedis (maxRetriesPerRequest: null); the queue does not close it. */
  constructor(redis: Redis, opts: BullQueueOptions = {}) {
    this.#redis = defineCommands(redis);
    this.#p = opts.prefix ?? 'swt';
    this.#opts = { lockDurationMs: 30_000, stalledIntervalMs: 15_000, maxRecoveries: 5, limitLeaseMs: 30_000, limitRetryMs: 1000, reconcileMs: 15_000, retentionMs: 30 * 86_400_000, ...opts };
    this.#limit = new RedisLimit(redis, { prefix: this.#p, leaseMs: this.#opts.limitLeaseMs });
  }

  /** Who this process is in job records and logs: host/pid/random. */
  get owner(): string {
    return this.#owner;
  }

  #producer(kind: string): Queue {
    let q = this.#producers.get(kind);
    if (!q) {
      q = new Queue(kind, { connection: this.#redis, prefix: `${this.#p}:bull` });
      q.on('error', (e) => this.#opts.logger?.warn({ kind, err: e.message }, 'BullMQ queue error'));
      this.#producers.set(kind, q);
    }
    return q;
  }

  async #addToBull(kind: string, id: string, runAt: number, priority: number): Promise<void> {
    await this.#producer(kind).add(
      kind,
      { id },
      {
        jobId: bullId(id),
        delay: Math.max(0, runAt - Date.now()),
        ...(priority > 0 ? { priority: Math.min(2_097_152, Math.floor(priority)) } : {}),
        attempts: 1,
        removeOnComplete: true,
        removeOnFail: true,
      },
    );
  }

  async enqueue<P>(spec: JobSpec<P>): Promise<EnqueueResult> {
    const now = Date.now();
    const runAt = now + (spec.delayMs ?? 0);
    const priority = spec.priority ?? 0;
    const res = await this.#redis.swtEnqueue(
      this.#p,
      spec.key ?? '',
      spec.kind,
      JSON.stringify(spec.payload),
      spec.group ?? '',
      String(Math.max(1, spec.maxAttempts ?? 3)),
      String(runAt),
      String(now),
      String(priority),
      spec.limit?.key ?? '',
      String(spec.limit ? Math.max(1, spec.limit.max) : 0),
    );
    const [id, created, ...others] = res.map(String);
    const superseded = others.map((s) => s.slice(1));
    if (created === '1') await this.#addToBull(spec.kind, id!, runAt, priority);
    await this.#afterCancel(others);
    return { id: id!, created: created === '1', superseded };
  }

  /** Queued jobs cancelled leave BullMQ (best effort: a worker that took one skips it); running ones abort here if they run here. */
  async #afterCancel(marked: string[]): Promise<void> {
    for (const m of marked) {
      const id = m.slice(1);
      if (m.startsWith('r')) {
        this.#live.get(id)?.abort(new Error(SUPERSEDED));
        continue;
      }
      const rec = await this.get(id);
      // A job that became another kind (become) is still in the BullMQ queue it was enqueued in.
      const bullKind = rec && ((await this.#redis.hget(`${this.#p}:job:${id}`, 'bull_kind')) || rec.kind);
      if (bullKind) await this.#producer(bullKind).remove(bullId(id)).catch(() => 0);
    }
  }

  work<P>(kind: string, handler: JobHandler<P>, opts: { concurrency?: number } = {}): void {
    this.#kinds.set(kind, { handler: handler as JobHandler<unknown>, concurrency: Math.max(1, opts.concurrency ?? 1) });
    if (this.#started) this.#startWorker(kind);
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    if (this.#kinds.size === 0) return; // a web process: it only enqueues
    this.#subscriber = this.#redis.duplicate();
    this.#subscriber.on('error', () => undefined);
    this.#subscriber.on('message', (_channel: string, id: string) => this.#live.get(id)?.abort(new Error(SUPERSEDED)));
    await this.#subscriber.subscribe(`${this.#p}:cancel`);
    for (const kind of this.#kinds.keys()) this.#startWorker(kind);
    const housekeeping = async (prune: boolean) => {
      await this.reconcile().catch((e) => this.#opts.logger?.warn({ err: errorLine(e, 1000) }, 'reconciling the queue failed'));
      if (prune) await this.prune().catch((e) => this.#opts.logger?.warn({ err: errorLine(e, 1000) }, 'dropping old finished jobs failed'));
    };
    await housekeeping(true);
    const due = pruneDue();
    this.#reconcileTimer = setInterval(() => void housekeeping(due()), this.#opts.reconcileMs);
    this.#reconcileTimer.unref();
  }

  #startWorker(kind: string): void {
    const reg = this.#kinds.get(kind)!;
    if (reg.worker) return;
    const worker = new Worker(kind, (job, token) => this.#process(kind, reg, job, token!), {
      connection: this.#redis,
      prefix: `${this.#p}:bull`,
      concurrency: reg.concurrency,
      lockDuration: this.#opts.lockDurationMs,
      stalledInterval: this.#opts.stalledIntervalMs,
      // Our records count recoveries (maxRecoveries); BullMQ should always hand a stalled job back.
      maxStalledCount: 1_000_000,
      drainDelay: 1,
    });
    worker.on('error', (e) => this.#opts.logger?.warn({ kind, err: e.message }, 'BullMQ worker error'));
    reg.worker = worker;
  }

  async stop(opts: { timeoutMs?: number } = {}): Promise<void> {
    this.#started = false;
    if (this.#reconcileTimer) clearInterval(this.#reconcileTimer);
    this.#reconcileTimer = undefined;
    const workers = [...this.#kinds.values()].flatMap((r) => (r.worker ? [r.worker] : []));
    for (const r of this.#kinds.values()) r.worker = undefined;
    // Running jobs get `timeoutMs` to finish; the rest keep their BullMQ lock until it runs out, then another worker resumes them.
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), opts.timeoutMs ?? 30_000)));
    const closing = Promise.allSettled(workers.map((w) => w.close()));
    if ((await Promise.race([closing, timedOut])) === 'timeout') await Promise.allSettled(workers.map((w) => w.close(true)));
    clearTimeout(timer);
    await Promise.allSettled([...this.#producers.values()].map((q) => q.close()));
    this.#producers.clear();
    if (this.#subscriber) {
      this.#subscriber.disconnect();
      this.#subscriber = undefined;
    }
  }

  async get<P = unknown>(id: string): Promise<JobRecord<P> | undefined> {
    return toRecord<P>(await this.#redis.hgetall(`${this.#p}:job:${id}`));
  }

  async findByKey<P = unknown>(key: string): Promise<JobRecord<P> | undefined> {
    const id = await this.#redis.get(`${this.#p}:key:${key}`);
    return id ? this.get<P>(id) : undefined;
  }

  async #records<P>(ids: string[]): Promise<JobRecord<P>[]> {
    if (ids.length === 0) return [];
    const pipe = this.#redis.pipeline();
    for (const id of ids) pipe.hgetall(`${this.#p}:job:${id}`);
    const res = (await pipe.exec()) ?? [];
    return res.flatMap(([err, h]) => {
      const r = err ? undefined : toRecord<P>(h as Record<string, string>);
      return r ? [r] : [];
    });
  }

  async list<P = unknown>(filter: { kind?: string; state?: JobState; group?: string } = {}): Promise<JobRecord<P>[]> {
    const ids = filter.state ? await this.#redis.smembers(`${this.#p}:state:${filter.state}`) : await this.#redis.zrange(`${this.#p}:jobs`, 0, -1);
    const recs = await this.#records<P>(ids);
    return recs
      .filter((r) => (!filter.kind || r.kind === filter.kind) && (!filter.state || r.state === filter.state) && (!filter.group || r.group === filter.group))
      .sort((a, b) => Number(a.id) - Number(b.id));
  }

  async recent<P = unknown>(n: number): Promise<JobRecord<P>[]> {
    if (n <= 0) return [];
    return this.#records<P>(await this.#redis.zrevrange(`${this.#p}:jobs`, 0, Math.floor(n) - 1));
  }

  async counts(): Promise<Record<JobState, number>> {
    const pipe = this.#redis.pipeline();
    for (const s of JOB_STATES) pipe.scard(`${this.#p}:state:${s}`);
    const res = (await pipe.exec()) ?? [];
    return Object.fromEntries(JOB_STATES.map((s, i) => [s, Number(res[i]?.[1] ?? 0)])) as Record<JobState, number>;
  }

  async prune(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = Number(await this.#redis.swtPrune(this.#p, String(Date.now() - this.#opts.retentionMs), String(PRUNE_BATCH)));
      total += n;
      if (n < PRUNE_BATCH / 2) return total;
    }
  }

  async become<P>(id: string, spec: BecomeSpec<P>): Promise<{ taken: boolean; superseded: string[] }> {
    const [status, ...marked] = (await this.#redis.swtBecome(this.#p, id, spec.kind, JSON.stringify(spec.payload), spec.key ?? '', spec.group ?? '', String(Date.now()))).map(String);
    await this.#afterCancel(marked);
    return { taken: status === 'taken', superseded: marked.map((m) => m.slice(1)) };
  }

  async cancelGroup(group: string): Promise<string[]> {
    const marked = (await this.#redis.swtCancelGroup(this.#p, group, String(Date.now()))).map(String);
    await this.#afterCancel(marked);
    return marked.map((m) => m.slice(1));
  }

  async drain(timeoutMs = 10 * 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const kinds = [...this.#kinds.keys()];
    for (;;) {
      const pipe = this.#redis.pipeline();
      for (const k of kinds) pipe.scard(`${this.#p}:open:${k}`);
      const open = ((await pipe.exec()) ?? []).reduce((n, [, c]) => n + Number(c ?? 0), 0);
      if (open === 0 && this.#live.size === 0) return;
      if (Date.now() > deadline) throw new Error(`the queue did not drain within ${timeoutMs} ms (${open} jobs left)`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  on(event: JobEvent, listener: (job: JobRecord) => void): void {
    this.#events.on(event, listener);
  }

  /**
   * Puts back in BullMQ the open jobs of this process's kinds that have no BullMQ job: an
   * enqueue cut between its two writes, a job whose processing failed outside the handler, a
   * Redis that lost BullMQ's keys. Jobs changed in the last few seconds are left alone.
   */
  async reconcile(): Promise<number> {
    let n = 0;
    const quiet = Date.now() - Math.max(5000, this.#opts.lockDurationMs);
    for (const kind of this.#kinds.keys()) {
      const ids = await this.#redis.smembers(`${this.#p}:open:${kind}`);
      for (const rec of await this.#records(ids)) {
        if (TERMINAL.has(rec.state) || rec.updatedAt > quiet) continue;
        if (await this.#producer(kind).getJob(bullId(rec.id))) continue;
        const priority = Number(await this.#redis.hget(`${this.#p}:job:${rec.id}`, 'priority')) || 0;
        await this.#addToBull(kind, rec.id, rec.runAt, priority);
        this.#opts.logger?.warn({ job: rec.id, kind, state: rec.state }, 'job had no BullMQ entry: put back');
        n++;
      }
    }
    return n;
  }

  async #process(kind: string, reg: Registered, bull: Job, token: string): Promise<void> {
    const id = String((bull.data as { id: string }).id);
    const first = await this.get(id);
    if (!first || TERMINAL.has(first.state)) return;
    const log = this.#opts.logger?.child({ job: id, kind });
    const limit = first.limit;
    if (limit && !(await this.#limit.tryAcquire(limit.key, id, limit.max))) {
      // The key is at its limit elsewhere: back to delayed, no attempt spent.
      const wait = Math.round(this.#opts.limitRetryMs * (0.5 + Math.random()));
      await bull.moveToDelayed(Date.now() + wait, token);
      throw new DelayedError();
    }
    try {
      const claim = (await this.#redis.swtClaim(this.#p, id, this.#owner, String(Date.now()), String(this.#opts.maxRecoveries))).map(String);
      if (claim[0] !== 'run') {
        if (claim[0] === 'failed') log?.warn({ err: claim[1] }, 'job failed: its process kept dying');
        if (claim[0] === 'failed' || claim[0] === 'cancelled') await this.#emit(claim[0], id);
        return;
      }
      if (claim[2] === 'recovered') log?.warn('job resumed: its worker is gone');
      const attempt = Number(claim[1]);
      const job = (await this.get(id))!;
      const controller = new AbortController();
      this.#live.set(id, controller);
      const watch = setInterval(() => {
        void (async () => {
          if (limit && !(await this.#limit.renew(limit.key, id))) await this.#limit.tryAcquire(limit.key, id, limit.max);
          if ((await this.#redis.hget(`${this.#p}:job:${id}`, 'cancel')) === '1') controller.abort(new Error(SUPERSEDED));
        })().catch(() => undefined);
      }, Math.max(50, Math.min(2000, Math.floor(this.#opts.limitLeaseMs / 3))));
      watch.unref();
      this.#events.emit('started', job);
      let outcome: AttemptOutcome;
      try {
        outcome = await runAttempt(reg.handler, { job, attempt, lastAttempt: attempt >= job.maxAttempts, signal: controller.signal }, this.#opts.backoff, log);
      } finally {
        clearInterval(watch);
        this.#live.delete(id);
      }
      const mine = await this.#redis.swtFinish(this.#p, id, this.#owner, outcome.state, outcome.error ?? '', outcome.retryAt ? String(outcome.retryAt) : '', String(Date.now()));
      if (mine !== 1) {
        log?.warn('job finished after another worker took it over: result dropped');
        return;
      }
      await this.#emit(outcome.state === 'queued' ? 'retrying' : (outcome.state as JobEvent), id);
      if (outcome.retryAt) {
        await bull.moveToDelayed(outcome.retryAt, token);
        throw new DelayedError();
      }
      if (outcome.state === 'failed') throw new UnrecoverableError(outcome.error);
    } finally {
      if (limit) await this.#limit.release(limit.key, id).catch(() => undefined);
    }
  }

  async #emit(event: JobEvent, id: string): Promise<void> {
    const rec = await this.get(id).catch(() => undefined);
    if (rec) this.#events.emit(event, rec);
  }
}
