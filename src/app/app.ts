/**
 * The GitHub App assembled: its queue, store and repository cache (SQLite on one machine; Redis
 * with REDIS_URL, shared by a web process and any number of workers); the Probot application
 * function (webhook handlers, workers, heartbeats, health, status page, metrics); and `startApp`,
 * which serves it on a port (tests, the demo, the benchmarks). `index.ts` runs it under Probot's
 * `run`; `swt worker` (worker.ts) runs the workers alone.
 */
import type Database from 'better-sqlite3';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Probot, ProbotOctokit, type ApplicationFunction, type ApplicationFunctionOptions } from 'probot';
import { HANDLED_EVENTS, registerHandlers } from '../webhooks/handlers.js';
import { webhookReceiver } from '../webhooks/receiver.js';
import { OctokitPort, type OctokitLike } from '../github/port.js';
import { PermanentJobError, type JobQueue } from '../queue/queue.js';
import type { BullQueueOptions } from '../queue/bullQueue.js';
import { SqliteJobQueue } from '../queue/sqliteQueue.js';
import { RepoCache, webBaseUrl } from '../repo/cache.js';
import type { Sandbox } from '../sandbox/types.js';
import { SwtError } from '../util/errors.js';
import { logger as rootLogger, type Logger } from '../util/logger.js';
import { createProcessMetrics, observeQueue, type ProcessMetrics } from '../web/metrics.js';
import { statusHandler } from '../web/status.js';
import { LocalHeartbeats, RedisHeartbeats, startHeartbeat, type Heartbeats, type WorkerReport } from '../web/heartbeat.js';
import { openDatabase, SqliteStore, type Store } from '../store/sqliteStore.js';
import type { WorkerDeps } from '../jobs/index.js';
import { repoSlug, type Target } from '../github/types.js';
import { githubApiUrl, settingsFrom, type Environment, type Role, type Settings, type WebhookLimits } from '../settings/index.js';
import { healthHandler } from '../web/health.js';

export type { Role } from '../settings/index.js';


export interface ServicesOptions {
  /** Database and repository cache; default SWT_DATA_DIR, else ~/.cache/swt-bot/app. */
  dataDir?: string;
  sandbox?: Sandbox;
  logger?: Logger;
  generation?: WorkerDeps['generation'];
  concurrency?: WorkerDeps['concurrency'];
  lanes?: WorkerDeps['lanes'];
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

export interface Services {
  engine: 'sqlite' | 'redis';
  role: Role;
  settings: Settings;
  /** The SQLite database (embedded engine only). */
  db?: Database.Database;
  /** The Redis connection (REDIS_URL only). */
  redis?: Redis;
  queue: JobQueue;
  store: Store;
  heartbeats: Heartbeats;
  metrics: ProcessMetrics;
  /** This process in heartbeats and the queue's records. */
  id: string;
  cache: RepoCache;
  sandbox: Sandbox;
  logger: Logger;
  options: ServicesOptions;
  close(): Promise<void>;
}

/** The REST base URL as Probot derives it: `GHE_PROTOCOL://GHE_HOST/api/v3` for a GHES, else github.com's. */
export function apiBaseUrl(env?: Environment): string {
  return githubApiUrl(env);
}

/** A web process runs no containers: it never loads the Docker client (nor the pipeline), which keeps it small. */
const NO_CONTAINERS_HERE: Sandbox = {
  ensureEnvironment: () => Promise.reject(new SwtError('BAD_CONFIG', 'a web process (SWT_ROLE=web) runs no containers')),
  run: () => Promise.reject(new SwtError('BAD_CONFIG', 'a web process (SWT_ROLE=web) runs no containers')),
  openSession: () => Promise.reject(new SwtError('BAD_CONFIG', 'a web process (SWT_ROLE=web) runs no containers')),
};

/**
 * The queue, store and the rest of a process. What a role does not use is not loaded (modules
 * are imported on demand): a web process on SQLite holds no Docker, Redis or pipeline code, so
 * what it receives is most of what it holds.
 */
export async function openServices(opts: ServicesOptions = {}): Promise<Services> {
  const settings = opts.settings ?? settingsFrom(opts.env);
  const dataDir = opts.dataDir ?? settings.dataDir;
  const logger = opts.logger ?? rootLogger;
  const role = opts.role ?? settings.role;
  const redisUrl = opts.redisUrl ?? settings.redisUrl;
  const cache = new RepoCache({ root: join(dataDir, 'repos'), logger });
  // One made here is closed here (its warm pool emptied, its upkeep awaited); a given one is the caller's.
  const closeSandbox = opts.sandbox ? async () => undefined : async () => sandbox.close?.();
  const sandbox = opts.sandbox ?? (role === 'web' ? NO_CONTAINERS_HERE : (await import('../sandbox/index.js')).createDockerSandbox({ logger, warmPool: settings.warmPool }));
  const metrics = createProcessMetrics();
  const options = { ...opts, dataDir, role };
  if (redisUrl) {
    // One after the other: modules they share are then linked once (and jest's VM modules need it).
    const { connectRedis } = await import('../queue/redis.js');
    const { BullJobQueue } = await import('../queue/bullQueue.js');
    const { RedisStore } = await import('../store/redisStore.js');
    // Web and workers share nothing but Redis (and GitHub): queue, store and heartbeats live there.
    const prefix = settings.redisPrefix;
    const redis = connectRedis(redisUrl, logger.child({ mod: 'redis' }));
    const queue = new BullJobQueue(redis, { prefix, logger: logger.child({ mod: 'queue' }), ...opts.bull });
    observeQueue(queue, metrics);
    return {
      engine: 'redis',
      role,
      settings,
      redis,
      queue,
      store: new RedisStore(redis, { prefix }),
      heartbeats: new RedisHeartbeats(redis, { prefix }),
      metrics,
      id: queue.owner,
      cache,
      sandbox,
      logger,
      options,
      async close() {
        await queue.stop({ timeoutMs: 5000 });
        await closeSandbox();
        redis.disconnect();
      },
    };
  }
  const db = openDatabase(join(dataDir, 'swt.db'));
  const queue = new SqliteJobQueue(db, { logger: logger.child({ mod: 'queue' }) });
  observeQueue(queue, metrics);
  return {
    engine: 'sqlite',
    role,
    settings,
    db,
    queue,
    store: new SqliteStore(db),
    heartbeats: new LocalHeartbeats(),
    metrics,
    id: `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
    cache,
    sandbox,
    logger,
    options,
    async close() {
      await queue.stop({ timeoutMs: 5000 });
      await closeSandbox();
      db.close();
    },
  };
}

/**
 * The Octokit the App uses. Probot's default throttles to GitHub's secondary rate limits (one
 * write per second, one comment per three seconds, per process). SWT_GITHUB_THROTTLE=off drops
 * that for a GHES whose administrators turned rate limits off (its default).
 */
export function octokitClass(throttle: boolean): typeof ProbotOctokit | undefined {
  if (throttle) return undefined;
  return ProbotOctokit.defaults((o: Record<string, unknown>) => ({ ...o, throttle: { ...(o.throttle as object), enabled: false } })) as typeof ProbotOctokit;
}

/** The GitHub of an installation, for a worker. */
export async function installationPort(app: Probot, t: Target): Promise<OctokitPort> {
  if (!t.installationId) throw new PermanentJobError(`no installation for ${repoSlug(t)}: the App is not installed there`);
  const octokit: OctokitLike = await app.auth(t.installationId);
  return new OctokitPort(octokit);
}

/** What this process tells the others every few seconds (workers only). */
async function workerReport(services: Services, kinds: string[], startedAt: number, host: () => Promise<WorkerReport['docker']>): Promise<WorkerReport> {
  const report = await host().catch((e: Error) => ({ error: `Docker engine: ${e.message.split('\n')[0]}` }));
  if (!('error' in report) && report.freeDiskBytes !== null) services.metrics.freeDiskBytes.set({ worker: services.id }, report.freeDiskBytes);
  return {
    id: services.id,
    host: hostname(),
    pid: process.pid,
    role: services.role,
    kinds,
    startedAt,
    seenAt: Date.now(),
    docker: report,
    // Each worker keeps its engine's environment images under SWT_ENV_CACHE_GB between builds too.
    evicted: services.sandbox.evictEnvironments ? (await services.sandbox.evictEnvironments().catch(() => ({ removed: [] }))).removed : [],
    metrics: services.engine === 'redis' ? await services.metrics.registry.getMetricsAsJSON() : undefined,
  };
}

/** Where webhooks come in: the App's secret (WEBHOOK_SECRET) and path (WEBHOOK_PATH). */
export interface WebhookOptions {
  secret: string;
  path?: string;
  /** What webhook bodies being read at once may hold (SWT_WEBHOOK_BUFFER_MIB). */
  bufferBytes?: number;
  /** The reserve, per-client caps and idle cut (SWT_WEBHOOK_*). */
  limits?: WebhookLimits;
}

/**
 * The Probot application, by role: the webhook receiver (web), workers and their heartbeat
 * (worker), or both (all); health, status page and metrics everywhere a server runs. Starts the
 * queue. The receiver answers every delivery itself: Probot's webhook middleware is not mounted (appHandler).
 */
export function swtApp(services: Services, webhook?: WebhookOptions): ApplicationFunction {
  return async (app, { addHandler }) => {
    const { role, settings } = services;
    const lanes = services.options.lanes ?? ['fast', 'heavy'];
    if (role !== 'worker') {
      if (!webhook?.secret) throw new SwtError('BAD_CONFIG', 'the App receives webhooks only with its webhook secret: set WEBHOOK_SECRET');
      addHandler(webhookReceiver({ ...webhook, queue: services.queue, handles: HANDLED_EVENTS, log: services.logger.child({ mod: 'webhooks' }) }));
    }
    // A worker with a fast lane reads configs and decides.
    if (role !== 'web' && lanes.includes('fast')) registerHandlers(app, { queue: services.queue, store: services.store, concurrency: services.options.concurrency?.fast });
    if (role !== 'web') (await import('../jobs/index.js')).registerWorkers({
      queue: services.queue,
      store: services.store,
      cache: services.cache,
      sandbox: services.sandbox,
      logger: services.logger,
      github: (t) => installationPort(app, t),
      gitBaseUrl: services.options.gitBaseUrl ?? webBaseUrl(services.options.env),
      generation: services.options.generation,
      concurrency: services.options.concurrency,
      lanes: services.options.lanes,
      // Progress edits are writes too: under GitHub's throttling they must leave room for new checks.
      progressIntervalMs: services.options.progressIntervalMs ?? (settings.githubThrottle ? 10_000 : 2000),
      env: services.options.env,
      settings,
      metrics: services.metrics,
    });
    addHandler(healthHandler(services));
    const token = services.options.statusToken ?? settings.statusToken;
    addHandler(
      statusHandler({ engine: services.engine, queue: services.queue, store: services.store, heartbeats: services.heartbeats, metrics: services.metrics, selfId: services.id, token }, (e) =>
        services.logger.warn({ err: (e as Error).message }, 'status page failed'),
      ),
    );
    await services.queue.start();
    if (role !== 'web') {
      const startedAt = Date.now();
      // Loaded here, once, by the roles that run containers only.
      const { connectDocker } = await import('../sandbox/index.js');
      const { dockerHostReport } = await import('../web/dockerHost.js');
      const beat = startHeartbeat({
        heartbeats: services.heartbeats,
        intervalMs: services.options.heartbeatMs ?? settings.heartbeatMs,
        collect: () => workerReport(services, [...lanes], startedAt, () => dockerHostReport(connectDocker())),
        onError: (e) => services.logger.warn({ err: (e as Error).message }, 'heartbeat failed'),
      });
      const close = services.close;
      services.close = async () => {
        beat.stop();
        await close();
      };
    }
  };
}

export interface StartAppOptions extends ServicesOptions {
  appId: number | string;
  privateKey: string;
  secret: string;
  /** REST base URL, e.g. `http://127.0.0.1:1234/api/v3` for a GHES (or the fake GitHub). */
  baseUrl?: string;
  port?: number;
  host?: string;
  Octokit?: typeof ProbotOctokit;
}

export interface RunningApp {
  url: string;
  port: number;
  services: Services;
  probot: Probot;
  stop(): Promise<void>;
}

export interface ListenOptions {
  webhook: WebhookOptions;
  /** 0: any free port. */
  port: number;
  host: string;
}

type Handler = Parameters<ApplicationFunctionOptions['addHandler']>[0];

/**
 * The App's HTTP handlers (webhook receiver, health, status page, metrics) in the order added, then
 * 404. Unlike Probot's `createNodeMiddleware`, it mounts no webhook middleware of Probot's: the
 * receiver answers every delivery, so Probot's would be built and never reached.
 */
async function appHandler(appFn: ApplicationFunction, probot: Probot, log: Logger): Promise<(req: IncomingMessage, res: ServerResponse) => Promise<void>> {
  const handlers: Handler[] = [];
  await probot.load(appFn, { cwd: process.cwd(), addHandler: (h) => handlers.push(h) });
  return async (req, res) => {
    try {
      for (const h of handlers) if (await h(req, res)) return;
      if (!res.headersSent) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    } catch (e) {
      log.error({ err: (e as Error).message, url: req.url?.split('?')[0] }, 'request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n');
      else res.end();
    }
  };
}

/** Serves the App of these services on a port. `npm start` and the tests both use it. */
export async function listenApp(services: Services, probot: Probot, opts: ListenOptions): Promise<RunningApp> {
  const limits = services.settings.http;
  // Node's defaults (5 min per request, no cap on connections) let slow clients hold the process.
  const server: Server = createServer({ headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, connectionsCheckingInterval: 1000 });
  server.maxConnections = limits.maxConnections;
  try {
    const handle = await appHandler(swtApp(services, { bufferBytes: limits.webhookBufferBytes, limits: limits.webhook, ...opts.webhook }), probot, services.logger);
    server.on('request', (req, res) => void handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => resolve());
    });
  } catch (e) {
    await services.close().catch(() => undefined);
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') throw new SwtError('BAD_CONFIG', `port ${opts.port} on ${opts.host} is in use: set PORT to another one`);
    throw e;
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;
  services.logger.info({ url, role: services.role, engine: services.engine }, 'listening');
  return {
    url,
    port,
    services,
    probot,
    async stop() {
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await services.close();
    },
  };
}

/** Serves the App on a port (0: any free one), on 127.0.0.1 unless told otherwise. */
export async function startApp(opts: StartAppOptions): Promise<RunningApp> {
  const services = await openServices(opts);
  const Octokit = opts.Octokit ?? octokitClass(services.settings.githubThrottle);
  const probot = new Probot({
    appId: opts.appId,
    privateKey: opts.privateKey,
    secret: opts.secret,
    baseUrl: opts.baseUrl ?? apiBaseUrl(opts.env),
    log: services.logger.child({ name: 'probot' }),
    ...(Octokit ? { Octokit } : {}),
  });
  return listenApp(services, probot, { webhook: { secret: opts.secret }, port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
}
