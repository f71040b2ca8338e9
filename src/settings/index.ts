/**
 * The operator's settings: every environment variable the host process reads is parsed here, and
 * only here, with the zod schemas of one table (variables.ts), and handed out typed. A bad value is
 * refused with its name, never silently replaced by the default.
 *
 * `envValues()` reads the current environment each call, cached while no variable of the table changed,
 * so a test that sets `process.env.X` between cases sees its value; a function given an
 * environment object (`settingsFrom({ ... })`) reads that one instead.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SwtError } from '../util/errors.js';
import { VARIABLES, type EnvValues, type VariableName } from './variables.js';

export { VARIABLES, GROUP_TITLES, priceTableSchema, modelPriceSchema, type EnvValues, type Group, type Variable, type VariableName } from './variables.js';

/** An environment: process.env or a test's own object. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The process's environment, whole: for a child process that inherits it and for the secret scan of logs; never parsed elsewhere. */
export function processEnvironment(): NodeJS.ProcessEnv {
  return process.env;
}

const NAMES = Object.keys(VARIABLES) as VariableName[];
const SCHEMAS = Object.fromEntries(NAMES.map((n) => [n, VARIABLES[n].schema]));
const parsed = new WeakMap<object, { key: string; values: EnvValues }>();

/** What one name's value reads as in an error: the value, unless it is a secret. */
function got(name: VariableName, raw: string | undefined): string {
  return (VARIABLES[name] as { secret?: boolean }).secret ? ' (value not shown)' : `, got ${JSON.stringify(raw)}`;
}

/**
 * Every variable of the table, parsed (defaults applied). Throws BAD_CONFIG naming each variable
 * whose value is refused and why.
 */
export function envValues(source: Environment = process.env): EnvValues {
  const key = NAMES.map((n) => source[n] ?? '\u0000').join('\u0001');
  const seen = parsed.get(source);
  if (seen?.key === key) return seen.values;
  const bad: string[] = [];
  const values: Record<string, unknown> = {};
  for (const name of NAMES) {
    const r = (SCHEMAS[name] as (typeof VARIABLES)[VariableName]['schema']).safeParse(source[name]);
    if (r.success) values[name] = r.data;
    else {
      const message = r.error.issues[0]!.message;
      bad.push(`${name}${message.startsWith(':') ? '' : ' '}${message}${got(name, source[name]?.trim())}`);
    }
  }
  if (bad.length) throw new SwtError('BAD_CONFIG', bad.join('; '), { hint: 'see docs/configuration.md' });
  parsed.set(source, { key, values: values as EnvValues });
  return values as EnvValues;
}

/**
 * LOG_LEVEL alone, undefined when unset or refused: the logger is made when its module loads, before
 * anything could report a bad value (envValues() does, at start).
 */
export function logLevel(source: Environment = process.env): EnvValues['LOG_LEVEL'] {
  const r = VARIABLES.LOG_LEVEL.schema.safeParse(source.LOG_LEVEL);
  return r.success ? r.data : undefined;
}

/** SWT_CACHE_DIR, else ~/.cache/swt-bot: locks, image use times, caches. */
export function cacheDir(source?: Environment): string {
  return envValues(source).SWT_CACHE_DIR ?? join(homedir(), '.cache', 'swt-bot');
}

/** GHE_HOST's web address (`<protocol>://<host>`), else github.com. */
export function githubWebUrl(source?: Environment): string {
  const e = envValues(source);
  return e.GHE_HOST ? `${e.GHE_PROTOCOL}://${e.GHE_HOST}` : 'https://github.com';
}

/** GHE_HOST's REST API (`<protocol>://<host>/api/v3`), else api.github.com. */
export function githubApiUrl(source?: Environment): string {
  return envValues(source).GHE_HOST ? `${githubWebUrl(source)}/api/v3` : 'https://api.github.com';
}

/** DOCKER_HOST, else the local socket. */
export function dockerHost(source?: Environment): string {
  return envValues(source).DOCKER_HOST ?? 'unix:///var/run/docker.sock';
}

/** What a process does: receive webhooks, run jobs, or both. */
export type Role = 'web' | 'worker' | 'all';

/** What an installation spent, or may spend, on one UTC day. */
export interface Spend {
  tokens: number;
  usd: number;
  containerMs: number;
}

export interface SpendLimits {
  /** Per installation and UTC day. */
  daily: Spend;
  /** New reproductions and checks one author may cause per hour (a maintainer's command is not counted). */
  authorStartsPerHour: number;
  /** Linked issues one pull request is checked against; the rest are named and left out. */
  maxLinkedIssues: number;
}

export interface HttpLimits {
  maxConnections: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** What webhook bodies being read at once may hold (SWT_WEBHOOK_BUFFER_MIB). */
  webhookBufferBytes: number;
  /** The reserve for small bodies, the per-client caps and the idle cut (webhooks/admission.ts). */
  webhook: WebhookLimits;
}

export interface WebhookLimits {
  /** SWT_WEBHOOK_RESERVE_MIB (8): kept for bodies of at most `smallBytes`. */
  reserveBytes: number;
  /** SWT_WEBHOOK_SMALL_KIB (256): GitHub's usual deliveries are a few KiB, rarely over 100. */
  smallBytes: number;
  /** SWT_WEBHOOK_CLIENT_BODIES (16): bodies one address (IPv6: /64) may have in flight. */
  clientBodies: number;
  /** SWT_WEBHOOK_CLIENT_MIB (26): bytes they may declare together (room for GitHub's largest, 25 MB). */
  clientBytes: number;
  /** SWT_WEBHOOK_BODY_IDLE_MS (5000): a body with no byte for this long is cut (408). */
  idleMs: number;
}

/** A hard budget per issue. Steps are LLM API calls (the SWT-bench paper's agents used ~20). */
export interface BudgetLimits {
  tokens: number;
  usd: number;
  steps: number;
  wallMs: number;
}

export interface Settings {
  /** SWT_ROLE (all). */
  role: Role;
  /** SWT_DATA_DIR (~/.cache/swt-bot/app): the SQLite database and the repository cache. */
  dataDir: string;
  /** REDIS_URL: queue, store and heartbeats in Redis; unset, SQLite in dataDir. */
  redisUrl?: string;
  /** SWT_REDIS_PREFIX (swt): the key prefix of everything kept in Redis. */
  redisPrefix: string;
  /** SWT_GITHUB_THROTTLE (on; `off` drops Probot's throttling, for a fake GitHub). */
  githubThrottle: boolean;
  /** SWT_HEARTBEAT_SECONDS (10): how often a worker reports itself. */
  heartbeatMs: number;
  /** SWT_STATUS_TOKEN: the status page and /metrics answer only with it. */
  statusToken?: string;
  /** PORT (3000) and HOST (localhost), Probot's names: where `npm start` listens. */
  port: number;
  host: string;
  /** SWT_HTTP_MAX_CONNECTIONS (256), SWT_HTTP_HEADERS_TIMEOUT_MS (10 s), SWT_HTTP_REQUEST_TIMEOUT_MS (15 s: GitHub gives up after 10), SWT_WEBHOOK_BUFFER_MIB (40), SWT_WEBHOOK_RESERVE_MIB, _SMALL_KIB, _CLIENT_BODIES, _CLIENT_MIB, _BODY_IDLE_MS (WebhookLimits). */
  http: HttpLimits;
  /** SWT_DAILY_TOKENS (2 000 000), SWT_DAILY_USD (10), SWT_DAILY_CONTAINER_MINUTES (600), SWT_AUTHOR_RUNS_PER_HOUR (10), SWT_MAX_LINKED_ISSUES (5). */
  spend: SpendLimits;
  /** SWT_REPO_CONCURRENCY (2): heavy jobs of one repository at once, over every worker. */
  repoConcurrency: number;
  /** SWT_BUDGET_TOKENS, SWT_BUDGET_USD, SWT_BUDGET_STEPS, SWT_BUDGET_WALL_MS: the per-issue ceilings a repository cannot raise. */
  budget: BudgetLimits;
  /** SWT_WARM_CONTAINERS (3; 0 for none), SWT_WARM_IDLE_SECONDS (600): idle run containers started ahead per environment in use. */
  warmPool: { size: number; idleMs: number };
}

const KiB = 1024;
const MiB = 1024 * KiB;
/** What an unset environment gives: the table's defaults. */
const UNSET = envValues({});

/** The App's warm pool by default: base, head and the baseline of the next validation of an environment. */
export const APP_WARM_POOL = { size: UNSET.SWT_WARM_CONTAINERS, idleMs: UNSET.SWT_WARM_IDLE_SECONDS * 1000 };

/** Bodies read at once, together: room for one payload of GitHub's largest (25 MB) and the usual small ones. */
export const DEFAULT_WEBHOOK_BUFFER_MIB = UNSET.SWT_WEBHOOK_BUFFER_MIB;

export const DEFAULT_WEBHOOK_LIMITS: WebhookLimits = settingsFrom({}).http.webhook;
/** SWT_REPO_CONCURRENCY unset. */
export const DEFAULT_REPO_CONCURRENCY = UNSET.SWT_REPO_CONCURRENCY;

/** SWT_DATA_DIR, else ~/.cache/swt-bot/app. */
export function defaultDataDir(source?: Environment): string {
  return envValues(source).SWT_DATA_DIR ?? join(homedir(), '.cache', 'swt-bot', 'app');
}

/** The per-issue ceilings a repository cannot raise (SWT_BUDGET_*). */
export function budgetLimits(source?: Environment): BudgetLimits {
  const e = envValues(source);
  return { tokens: e.SWT_BUDGET_TOKENS, usd: e.SWT_BUDGET_USD, steps: e.SWT_BUDGET_STEPS, wallMs: e.SWT_BUDGET_WALL_MS };
}

/** The App's settings, from the environment; a bad value is a BAD_CONFIG error naming the variable and what it got. */
export function settingsFrom(source?: Environment): Settings {
  const e = envValues(source);
  const requestTimeoutMs = e.SWT_HTTP_REQUEST_TIMEOUT_MS;
  // A reserve as large as the buffer would leave no room for any body over SWT_WEBHOOK_SMALL_KIB.
  if (e.SWT_WEBHOOK_RESERVE_MIB >= e.SWT_WEBHOOK_BUFFER_MIB) {
    throw new SwtError('BAD_CONFIG', `SWT_WEBHOOK_RESERVE_MIB must be less than SWT_WEBHOOK_BUFFER_MIB (${e.SWT_WEBHOOK_BUFFER_MIB}), got ${e.SWT_WEBHOOK_RESERVE_MIB}`);
  }
  return {
    role: e.SWT_ROLE,
    dataDir: defaultDataDir(source),
    ...(e.REDIS_URL ? { redisUrl: e.REDIS_URL } : {}),
    redisPrefix: e.SWT_REDIS_PREFIX,
    githubThrottle: e.SWT_GITHUB_THROTTLE,
    heartbeatMs: e.SWT_HEARTBEAT_SECONDS * 1000,
    ...(e.SWT_STATUS_TOKEN ? { statusToken: e.SWT_STATUS_TOKEN } : {}),
    port: e.PORT,
    host: e.HOST,
    http: {
      maxConnections: Math.floor(e.SWT_HTTP_MAX_CONNECTIONS),
      headersTimeoutMs: Math.min(e.SWT_HTTP_HEADERS_TIMEOUT_MS, requestTimeoutMs),
      requestTimeoutMs,
      webhookBufferBytes: Math.floor(e.SWT_WEBHOOK_BUFFER_MIB * MiB),
      webhook: {
        reserveBytes: Math.floor(e.SWT_WEBHOOK_RESERVE_MIB * MiB),
        smallBytes: Math.floor(e.SWT_WEBHOOK_SMALL_KIB * KiB),
        clientBodies: e.SWT_WEBHOOK_CLIENT_BODIES,
        clientBytes: Math.floor(e.SWT_WEBHOOK_CLIENT_MIB * MiB),
        idleMs: e.SWT_WEBHOOK_BODY_IDLE_MS,
      },
    },
    spend: {
      daily: { tokens: e.SWT_DAILY_TOKENS, usd: e.SWT_DAILY_USD, containerMs: e.SWT_DAILY_CONTAINER_MINUTES * 60_000 },
      authorStartsPerHour: Math.floor(e.SWT_AUTHOR_RUNS_PER_HOUR),
      maxLinkedIssues: Math.max(1, Math.floor(e.SWT_MAX_LINKED_ISSUES)),
    },
    repoConcurrency: e.SWT_REPO_CONCURRENCY,
    budget: budgetLimits(source),
    warmPool: { size: e.SWT_WARM_CONTAINERS, idleMs: e.SWT_WARM_IDLE_SECONDS * 1000 },
  };
}
