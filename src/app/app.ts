/**
 * The GitHub App assembled, top to bottom: the services of a process (services.ts), what its role
 * does with them (`swtApp`: receive webhooks, work jobs, or both; health, status page and metrics
 * wherever a server runs), and `listenApp`/`startApp`, which serve it on a port (tests, the demo,
 * the benchmarks). `index.ts` runs it under Probot's `run`; `swt worker` (worker.ts) runs the workers alone.
 */
import { Probot, ProbotOctokit, type ApplicationFunction } from 'probot';
import { OctokitPort, type OctokitLike } from '../github/port.js';
import { repoSlug, type Target } from '../github/types.js';
import { PermanentJobError } from '../queue/queue.js';
import { webBaseUrl } from '../repo/cache.js';
import { githubApiUrl, type Environment, type WebhookLimits } from '../settings/index.js';
import { SwtError } from '../util/errors.js';
import { healthHandler } from '../web/health.js';
import { statusHandler } from '../web/status.js';
import { HANDLED_EVENTS } from '../jobs/payloads.js';
import { webhookReceiver } from '../webhooks/receiver.js';
import { beatAsWorker } from './heartbeat.js';
import { chain, listen, type Handler } from './http.js';
import { openServices, ROLES, type Services, type ServicesOptions } from './services.js';

export { openServices, ROLES, type Role, type Services, type ServicesOptions } from './services.js';

/** The REST base URL as Probot derives it: `GHE_PROTOCOL://GHE_HOST/api/v3` for a GHES, else github.com's. */
export function apiBaseUrl(env?: Environment): string {
  return githubApiUrl(env);
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

/** Where webhooks come in: the App's secret (WEBHOOK_SECRET) and path (WEBHOOK_PATH). */
export interface WebhookOptions {
  secret: string;
  path?: string;
  /** What webhook bodies being read at once may hold (SWT_WEBHOOK_BUFFER_MIB). */
  bufferBytes?: number;
  /** The reserve, per-client caps and idle cut (SWT_WEBHOOK_*). */
  limits?: WebhookLimits;
}

/** The receiver: verifies each delivery and queues what it asks for. Probot's webhook middleware is not mounted. */
function receiverOf(services: Services, webhook: WebhookOptions | undefined): Handler {
  if (!webhook?.secret) throw new SwtError('BAD_CONFIG', 'the App receives webhooks only with its webhook secret: set WEBHOOK_SECRET');
  return webhookReceiver({ ...webhook, queue: services.queue, handles: HANDLED_EVENTS, repoConcurrency: services.settings.repoConcurrency, log: services.logger.child({ mod: 'webhooks' }) });
}

/** Registers the workers of this process's lanes, talking to GitHub as the App's installations. */
async function registerWork(app: Probot, services: Services): Promise<void> {
  const { options, settings } = services;
  (await import('../jobs/index.js')).registerWorkers({
    queue: services.queue,
    store: services.store,
    cache: services.cache,
    sandbox: services.sandbox,
    logger: services.logger,
    settings,
    metrics: services.metrics,
    github: (t) => installationPort(app, t),
    gitBaseUrl: options.gitBaseUrl ?? webBaseUrl(options.env),
    generation: options.generation,
    concurrency: options.concurrency,
    lanes: options.lanes,
    runWork: options.runWork,
    // Progress edits are writes too: under GitHub's throttling they must leave room for new checks.
    progressIntervalMs: options.progressIntervalMs ?? (settings.githubThrottle ? 10_000 : 2000),
    env: options.env,
  });
}

/** What every server answers besides webhooks: /healthz, the status page and /metrics. */
function pagesOf(services: Services): Handler[] {
  const token = services.options.statusToken ?? services.settings.statusToken;
  const status = { engine: services.engine, queue: services.queue, store: services.store, heartbeats: services.heartbeats, metrics: services.metrics, selfId: services.id, token };
  return [healthHandler(services), statusHandler(status, (e) => services.logger.warn({ err: (e as Error).message }, 'status page failed'))];
}

/** The Probot application of these services, by role (services.ts ROLES). Starts the queue. */
export function swtApp(services: Services, webhook?: WebhookOptions): ApplicationFunction {
  return async (app, { addHandler }) => {
    const role = ROLES[services.role];
    if (role.receives) addHandler(receiverOf(services, webhook));
    if (role.works) await registerWork(app, services);
    for (const h of pagesOf(services)) addHandler(h);
    await services.queue.start();
    if (role.works) await beatAsWorker(services, [...(services.options.lanes ?? ['fast', 'heavy'])]);
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

/** Serves the App of these services on a port. `npm start` and the tests both use it; the services close with it. */
export async function listenApp(services: Services, probot: Probot, opts: ListenOptions): Promise<RunningApp> {
  const limits = services.settings.http;
  const handlers: Handler[] = [];
  let server;
  try {
    await probot.load(swtApp(services, { bufferBytes: limits.webhookBufferBytes, limits: limits.webhook, ...opts.webhook }), { cwd: process.cwd(), addHandler: (h) => handlers.push(h) });
    server = await listen(chain(handlers, services.logger), limits, opts);
  } catch (e) {
    await services.close().catch(() => undefined);
    throw e;
  }
  services.logger.info({ url: server.url, role: services.role, engine: services.engine }, 'listening');
  return {
    url: server.url,
    port: server.port,
    services,
    probot,
    async stop() {
      await server.close();
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
