/**
 * What a process of the App holds, built once: settings, queue, store and heartbeats (SQLite on
 * one machine; Redis with REDIS_URL, shared by a web process and any number of workers), the
 * repository cache, the sandbox and the metrics. What a role does not use is not loaded (modules
 * are imported on demand): a web process on SQLite holds no Docker, Redis or pipeline code.
 */
import type Database from 'better-sqlite3';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { WorkerDeps } from '../jobs/index.js';
import type { BullQueueOptions } from '../queue/bullQueue.js';
import type { JobQueue } from '../queue/queue.js';
import { SqliteJobQueue } from '../queue/sqliteQueue.js';
import { RepoCache } from '../repo/cache.js';
import type { Sandbox } from '../sandbox/types.js';
import { settingsFrom, type Environment, type Role, type Settings } from '../settings/index.js';
import { openDatabase, SqliteStore, type Store } from '../store/sqliteStore.js';
import { SwtError } from '../util/errors.js';
import { logger as rootLogger, type Logger } from '../util/logger.js';
import { LocalHeartbeats, RedisHeartbeats, type Heartbeats } from '../web/heartbeat.js';
import { createProcessMetrics, observeQueue, type ProcessMetrics } from '../web/metrics.js';

export type { Role } from '../settings/index.js';

/** What each role does. Every role that serves HTTP also answers health, the status page and metrics. */
export const ROLES: Record<Role, { receives: boolean; works: boolean }> = {
  /** Verifies and queues webhooks; runs no job and no container. */
  web: { receives: true, works: false },
  /** Runs jobs (`swt worker`): containers, GitHub as the App, heartbeats. */
  worker: { receives: false, works: true },
  all: { receives: true, works: true },
};

export interface ServicesOptions {
  /** Database and repository cache; default SWT_DATA_DIR, else ~/.cache/swt-bot/app. */
  dataDir?: string;
  sandbox?: Sandbox;
  logger?: Logger;
  generation?: WorkerDeps['generation'];
  concurrency?: WorkerDeps['concurrency'];
  lanes?: WorkerDeps['lanes'];
  /** Tests of the decisions: what runs a decided reproduction or validation (jobs/deps.ts). */
  runWork?: WorkerDeps['runWork'];
  progressIntervalMs?: number;
  /** Where repositories are cloned from; default from GHE_HOST/GHE_PROTOCOL, else github.com. */
  gitBaseUrl?: string;
  env?: Environment;
  /** The operator's settings; default read from `env` (settings/index.ts). */
  settings?: Settings;
  /** Default SWT_ROLE, else all. */
  role?: Role;
  /** Default REDIS_URL: with it, queue, store and heartbeats live in Redis. */
  redisUrl?: string;
  /** BullMQ tuning (tests shorten the lock so a killed worker's job comes back sooner). */
  bull?: Omit<BullQueueOptions, 'prefix' | 'logger'>;
  /** How often a worker reports (default SWT_HEARTBEAT_SECONDS, else 10 s). */
  heartbeatMs?: number;
  /** SWT_STATUS_TOKEN: the status page and /metrics answer only with it. */
  statusToken?: string;
}

/** Where jobs, records and heartbeats live: one of the two engines. */
interface Engine {
  engine: 'sqlite' | 'redis';
  /** The SQLite database (embedded engine only). */
  db?: Database.Database;
  /** The Redis connection (REDIS_URL only). */
  redis?: Redis;
  queue: JobQueue;
  store: Store;
  heartbeats: Heartbeats;
  /** This process in heartbeats and the queue's records. */
  id: string;
  /** Lets go of the connection (the queue is stopped before). */
  disconnect(): void;
}

export interface Services extends Omit<Engine, 'disconnect'> {
  role: Role;
  settings: Settings;
  metrics: ProcessMetrics;
  cache: RepoCache;
  sandbox: Sandbox;
  logger: Logger;
  options: ServicesOptions;
  /** Runs at close and is awaited before the queue stops and the connection closes (a worker's heartbeat). */
  onClose(stop: () => void | Promise<void>): void;
  close(): Promise<void>;
}

/** A web process runs no containers: it never loads the Docker client (nor the pipeline), which keeps it small. */
const NO_CONTAINERS_HERE: Sandbox = {
  ensureEnvironment: () => Promise.reject(new SwtError('BAD_CONFIG', 'a web process (SWT_ROLE=web) runs no containers')),
  run: () => Promise.reject(new SwtError('BAD_CONFIG', 'a web process (SWT_ROLE=web) runs no containers')),
  openSession: () => Promise.reject(new SwtError('BAD_CONFIG', 'a web process (SWT_ROLE=web) runs no containers')),
};

function openSqlite(dataDir: string, logger: Logger): Engine {
  const db = openDatabase(join(dataDir, 'swt.db'));
  const queue = new SqliteJobQueue(db, { logger: logger.child({ mod: 'queue' }) });
  return { engine: 'sqlite', db, queue, store: new SqliteStore(db), heartbeats: new LocalHeartbeats(), id: `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`, disconnect: () => db.close() };
}

/** Web and workers share nothing but Redis (and GitHub): queue, store and heartbeats live there. */
async function openRedis(url: string, prefix: string, logger: Logger, bull: ServicesOptions['bull']): Promise<Engine> {
  // One after the other: modules they share are then linked once (and jest's VM modules need it).
  const { connectRedis } = await import('../queue/redis.js');
  const { BullJobQueue } = await import('../queue/bullQueue.js');
  const { RedisStore } = await import('../store/redisStore.js');
  const redis = connectRedis(url, logger.child({ mod: 'redis' }));
  const queue = new BullJobQueue(redis, { prefix, logger: logger.child({ mod: 'queue' }), ...bull });
  return { engine: 'redis', redis, queue, store: new RedisStore(redis, { prefix }), heartbeats: new RedisHeartbeats(redis, { prefix }), id: queue.owner, disconnect: () => redis.disconnect() };
}

/** The queue, store and the rest of a process, for its role. */
export async function openServices(opts: ServicesOptions = {}): Promise<Services> {
  const settings = opts.settings ?? settingsFrom(opts.env);
  const dataDir = opts.dataDir ?? settings.dataDir;
  const logger = opts.logger ?? rootLogger;
  const role = opts.role ?? settings.role;
  const redisUrl = opts.redisUrl ?? settings.redisUrl;
  // One made here is closed here (its warm pool emptied, its upkeep awaited); a given one is the caller's.
  const sandbox = opts.sandbox ?? (ROLES[role].works ? (await import('../sandbox/index.js')).createDockerSandbox({ logger, warmPool: settings.warmPool }) : NO_CONTAINERS_HERE);
  const closeSandbox = opts.sandbox ? async () => undefined : async () => sandbox.close?.();
  const { disconnect, ...engine } = redisUrl ? await openRedis(redisUrl, settings.redisPrefix, logger, opts.bull) : openSqlite(dataDir, logger);
  const metrics = createProcessMetrics();
  observeQueue(engine.queue, metrics);
  const stops: Array<() => void | Promise<void>> = [];
  return {
    ...engine,
    role,
    settings,
    metrics,
    cache: new RepoCache({ root: join(dataDir, 'repos'), logger }),
    sandbox,
    logger,
    options: { ...opts, dataDir, role },
    onClose: (stop) => void stops.push(stop),
    async close() {
      await Promise.all(stops.splice(0).map((stop) => stop()));
      await engine.queue.stop({ timeoutMs: 5000 });
      await closeSandbox();
      disconnect();
    },
  };
}
