/**
 * The GitHub App assembled: its database, queue, store and repository cache; the Probot
 * application function (webhook handlers, workers, a health endpoint); and `startApp`, which
 * serves it on a port (tests, the demo, the benchmark). `index.ts` runs it under Probot's `run`.
 */
import type Database from 'better-sqlite3';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createNodeMiddleware, Probot, ProbotOctokit, type ApplicationFunction } from 'probot';
import { registerHandlers } from '../github/handlers.js';
import { OctokitPort, type OctokitLike } from '../github/port.js';
import type { Target } from '../jobs/payloads.js';
import { PermanentJobError, type JobQueue } from '../jobs/queue.js';
import { SqliteJobQueue } from '../jobs/sqliteQueue.js';
import { RepoCache, webBaseUrl } from '../repo/cache.js';
import { createDockerSandbox } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/types.js';
import { logger as rootLogger, type Logger } from '../util/logger.js';
import { openDatabase, SqliteStore, type Store } from './store.js';
import { registerWorkers, type WorkerDeps } from './workers.js';

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
  env?: NodeJS.ProcessEnv;
}

export interface Services {
  db: Database.Database;
  queue: JobQueue;
  store: Store;
  cache: RepoCache;
  sandbox: Sandbox;
  logger: Logger;
  options: ServicesOptions;
  close(): Promise<void>;
}

/** The REST base URL as Probot derives it: `GHE_PROTOCOL://GHE_HOST/api/v3` for a GHES, else github.com's. */
export function apiBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.GHE_HOST ? `${webBaseUrl(env)}/api/v3` : 'https://api.github.com';
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SWT_DATA_DIR || join(homedir(), '.cache', 'swt-bot', 'app');
}

export function openServices(opts: ServicesOptions = {}): Services {
  const env = opts.env ?? process.env;
  const dataDir = opts.dataDir ?? defaultDataDir(env);
  const logger = opts.logger ?? rootLogger;
  const db = openDatabase(join(dataDir, 'swt.db'));
  const queue = new SqliteJobQueue(db, { logger: logger.child({ mod: 'queue' }) });
  const store = new SqliteStore(db);
  const cache = new RepoCache({ root: join(dataDir, 'repos'), logger });
  const sandbox = opts.sandbox ?? createDockerSandbox({ logger });
  return {
    db,
    queue,
    store,
    cache,
    sandbox,
    logger,
    options: { ...opts, dataDir },
    async close() {
      await queue.stop({ timeoutMs: 5000 });
      db.close();
    },
  };
}

/**
 * The Octokit the App uses. Probot's default throttles to GitHub's secondary rate limits (one
 * write per second, one comment per three seconds, per process). SWT_GITHUB_THROTTLE=off drops
 * that for a GHES whose administrators turned rate limits off (its default).
 */
export function octokitClass(env: NodeJS.ProcessEnv = process.env): typeof ProbotOctokit | undefined {
  if (env.SWT_GITHUB_THROTTLE !== 'off') return undefined;
  return ProbotOctokit.defaults((o: Record<string, unknown>) => ({ ...o, throttle: { ...(o.throttle as object), enabled: false } })) as typeof ProbotOctokit;
}

/** The GitHub of an installation, for a worker. */
async function installationPort(app: Probot, t: Target): Promise<OctokitPort> {
  if (!t.installationId) throw new PermanentJobError(`no installation for ${t.owner}/${t.repo}: the App is not installed there`);
  const octokit: OctokitLike = await app.auth(t.installationId);
  return new OctokitPort(octokit);
}

/** GET /healthz: 200 while the database answers, with the queue's counts. */
export function healthHandler(services: Services) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/healthz') return false;
    try {
      const rows = services.db.prepare(`SELECT state, COUNT(*) AS n FROM jobs GROUP BY state`).all() as Array<{ state: string; n: number }>;
      const jobs = Object.fromEntries(rows.map((r) => [r.state, r.n]));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', jobs }));
    } catch (e) {
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'error', error: (e as Error).message.split('\n')[0] }));
    }
    return true;
  };
}

/** The Probot application: handlers, workers, health endpoint; starts the queue. */
export function swtApp(services: Services): ApplicationFunction {
  return async (app, { addHandler }) => {
    registerHandlers(app, { queue: services.queue, store: services.store });
    registerWorkers({
      queue: services.queue,
      store: services.store,
      cache: services.cache,
      sandbox: services.sandbox,
      logger: services.logger,
      github: (t) => installationPort(app, t),
      gitBaseUrl: services.options.gitBaseUrl ?? webBaseUrl(services.options.env ?? process.env),
      generation: services.options.generation,
      concurrency: services.options.concurrency,
      lanes: services.options.lanes,
      // Progress edits are writes too: under GitHub's throttling they must leave room for new checks.
      progressIntervalMs: services.options.progressIntervalMs ?? ((services.options.env ?? process.env).SWT_GITHUB_THROTTLE === 'off' ? 2000 : 10_000),
      env: services.options.env,
    });
    addHandler(healthHandler(services));
    await services.queue.start();
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

/** Serves the App on a port (0: any free one), on 127.0.0.1 unless told otherwise. */
export async function startApp(opts: StartAppOptions): Promise<RunningApp> {
  const services = openServices(opts);
  const probot = new Probot({
    appId: opts.appId,
    privateKey: opts.privateKey,
    secret: opts.secret,
    baseUrl: opts.baseUrl ?? apiBaseUrl(opts.env ?? process.env),
    log: services.logger.child({ name: 'probot' }),
    ...((opts.Octokit ?? octokitClass(opts.env)) ? { Octokit: opts.Octokit ?? octokitClass(opts.env) } : {}),
  });
  const middleware = await createNodeMiddleware(swtApp(services), { probot });
  const server: Server = createServer((req, res) => {
    void middleware(req, res, () => {
      if (!res.headersSent) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
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
