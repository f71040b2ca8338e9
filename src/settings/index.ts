/**
 * The operator's settings for the App and its workers: every environment variable the delivery
 * side reads (webhooks, jobs, queue, store, status page), parsed once here with zod and passed
 * down typed. A bad value is refused with its name, never silently replaced by the default.
 * (The sandbox's, the LLM client's and the per-issue budget's variables are read by their own
 * modules; SWT_BUDGET_* through generation/budget.ts, included here as `budget`.)
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { budgetLimitsFrom, type BudgetLimits } from '../generation/budget.js';
import { SwtError } from '../util/errors.js';

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

/** The App's warm pool by default: base, head and the baseline of the next validation of an environment. */
export const APP_WARM_POOL = { size: 3, idleMs: 600_000 };

/** Bodies read at once, together: room for one payload of GitHub's largest (25 MB) and the usual small ones. */
export const DEFAULT_WEBHOOK_BUFFER_MIB = 40;
const KiB = 1024;
const MiB = 1024 * KiB;
export const DEFAULT_WEBHOOK_LIMITS: WebhookLimits = { reserveBytes: 8 * MiB, smallBytes: 256 * KiB, clientBodies: 16, clientBytes: 26 * MiB, idleMs: 5000 };

const blank = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : typeof v === 'string' ? v.trim() : v);
const number = (rule: (n: z.ZodNumber) => z.ZodNumber, dflt: number, says: string) =>
  z.preprocess(blank, z.coerce.number({ message: says }).pipe(rule(z.number({ message: says }).finite({ message: says }))).default(dflt));
const atLeast0 = (dflt: number) => number((n) => n.min(0, { message: 'must be a number ≥ 0' }), dflt, 'must be a number ≥ 0');
const positive = (dflt: number) => number((n) => n.positive({ message: 'must be a positive number' }), dflt, 'must be a positive number');

const ENV = z.object({
  SWT_ROLE: z.preprocess(blank, z.enum(['web', 'worker', 'all'], { message: 'must be web, worker or all' }).default('all')),
  SWT_DATA_DIR: z.preprocess(blank, z.string().optional()),
  REDIS_URL: z.preprocess(blank, z.string().optional()),
  SWT_REDIS_PREFIX: z.preprocess(blank, z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/, { message: 'must be letters, digits, . _ or -' }).default('swt')),
  SWT_GITHUB_THROTTLE: z.string().optional(),
  SWT_HEARTBEAT_SECONDS: positive(10),
  SWT_STATUS_TOKEN: z.preprocess(blank, z.string().optional()),
  PORT: number((n) => n.int({ message: 'must be a port number' }).min(0, { message: 'must be a port number' }).max(65535, { message: 'must be a port number' }), 3000, 'must be a port number'),
  HOST: z.preprocess(blank, z.string().default('localhost')),
  SWT_HTTP_MAX_CONNECTIONS: positive(256),
  SWT_HTTP_HEADERS_TIMEOUT_MS: positive(10_000),
  SWT_HTTP_REQUEST_TIMEOUT_MS: positive(15_000),
  SWT_WEBHOOK_BUFFER_MIB: positive(DEFAULT_WEBHOOK_BUFFER_MIB),
  SWT_WEBHOOK_RESERVE_MIB: atLeast0(DEFAULT_WEBHOOK_LIMITS.reserveBytes / MiB),
  SWT_WEBHOOK_SMALL_KIB: positive(DEFAULT_WEBHOOK_LIMITS.smallBytes / KiB),
  SWT_WEBHOOK_CLIENT_BODIES: number((n) => n.int({ message: 'must be a whole number > 0' }).positive({ message: 'must be a whole number > 0' }), DEFAULT_WEBHOOK_LIMITS.clientBodies, 'must be a whole number > 0'),
  SWT_WEBHOOK_CLIENT_MIB: positive(DEFAULT_WEBHOOK_LIMITS.clientBytes / MiB),
  SWT_WEBHOOK_BODY_IDLE_MS: positive(DEFAULT_WEBHOOK_LIMITS.idleMs),
  SWT_DAILY_TOKENS: atLeast0(2_000_000),
  SWT_DAILY_USD: atLeast0(10),
  SWT_DAILY_CONTAINER_MINUTES: atLeast0(600),
  SWT_AUTHOR_RUNS_PER_HOUR: atLeast0(10),
  SWT_MAX_LINKED_ISSUES: atLeast0(5),
  SWT_WARM_CONTAINERS: number((n) => n.int({ message: 'must be a whole number ≥ 0' }).min(0, { message: 'must be a whole number ≥ 0' }), APP_WARM_POOL.size, 'must be a whole number ≥ 0'),
  SWT_WARM_IDLE_SECONDS: positive(APP_WARM_POOL.idleMs / 1000),
  SWT_REPO_CONCURRENCY: number((n) => n.int({ message: 'must be a whole number > 0' }).positive({ message: 'must be a whole number > 0' }), 2, 'must be a whole number > 0'),
});

/** SWT_DATA_DIR, else ~/.cache/swt-bot/app. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SWT_DATA_DIR?.trim() || join(homedir(), '.cache', 'swt-bot', 'app');
}

/** Reads the environment once; a bad value is a BAD_CONFIG error naming the variable and what it got. */
export function settingsFrom(env: NodeJS.ProcessEnv = process.env): Settings {
  const r = ENV.safeParse(env);
  if (!r.success) {
    const i = r.error.issues[0]!;
    const name = String(i.path[0]);
    throw new SwtError('BAD_CONFIG', `${name} ${i.message}, got ${JSON.stringify(env[name])}`);
  }
  const e = r.data;
  const requestTimeoutMs = e.SWT_HTTP_REQUEST_TIMEOUT_MS;
  // A reserve as large as the buffer would leave no room for any body over SWT_WEBHOOK_SMALL_KIB.
  if (e.SWT_WEBHOOK_RESERVE_MIB >= e.SWT_WEBHOOK_BUFFER_MIB) {
    throw new SwtError('BAD_CONFIG', `SWT_WEBHOOK_RESERVE_MIB must be less than SWT_WEBHOOK_BUFFER_MIB (${e.SWT_WEBHOOK_BUFFER_MIB}), got ${e.SWT_WEBHOOK_RESERVE_MIB}`);
  }
  return {
    role: e.SWT_ROLE,
    dataDir: defaultDataDir(env),
    ...(e.REDIS_URL ? { redisUrl: e.REDIS_URL } : {}),
    redisPrefix: e.SWT_REDIS_PREFIX,
    githubThrottle: e.SWT_GITHUB_THROTTLE !== 'off',
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
    budget: budgetLimitsFrom(env),
    warmPool: { size: e.SWT_WARM_CONTAINERS, idleMs: e.SWT_WARM_IDLE_SECONDS * 1000 },
  };
}
