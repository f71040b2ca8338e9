/**
 * Every environment variable swt-bot's host process reads, in one table: its group, its default and
 * unit as a person reads them, its one doc line, and the zod schema that parses it. The values are
 * trimmed and an empty one counts as unset. `swt doctor` and docs/configuration.md are made from
 * this table (`npm run docs:config`). Pure.
 */
import { z } from 'zod';

export type Group = 'github' | 'processes' | 'http' | 'spend' | 'llm' | 'local' | 'ceilings' | 'sandbox';

export const GROUP_TITLES: Record<Group, string> = {
  github: 'GitHub App',
  processes: 'Processes and storage',
  http: 'HTTP server (webhook receiver)',
  spend: 'Spend and fairness (per installation)',
  llm: 'LLM',
  local: 'Local model (in-process, no API key) and the per-issue budget',
  ceilings: 'Sandbox ceilings (every test run and session)',
  sandbox: 'Sandbox: images, caches, installs',
};

export interface Variable {
  group: Group;
  schema: z.ZodType;
  doc: string;
  /** As shown to people; "—" when unset by default. */
  default?: string;
  unit?: string;
  /** Its value is never echoed in an error, nor shown by `swt doctor`. */
  secret?: boolean;
  /** Read by a library (Probot, docker-modem), not by swt's own code: listed so the operator finds it here. */
  readBy?: string;
}

/** Trimmed; empty is unset. */
const blank = (v: unknown) => (typeof v === 'string' ? (v.trim() === '' ? undefined : v.trim()) : v);
const text = () => z.preprocess(blank, z.string().optional());
const textOr = (dflt: string) => z.preprocess(blank, z.string().default(dflt));
const says = (values: readonly string[]) => `must be ${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.preprocess(blank, z.enum(values, { message: says(values) }).optional());
const oneOfOr = <const T extends readonly [string, ...string[]]>(values: T, dflt: T[number]) =>
  z.preprocess(blank, z.enum(values, { message: says(values) }).default(dflt as never) as z.ZodType<T[number]>);

type NumberRule = 'positive' | 'atLeast0' | 'int>0' | 'int≥0' | 'port' | 'int';
const SAYS: Record<NumberRule, string> = {
  positive: 'must be a positive number',
  atLeast0: 'must be a number ≥ 0',
  'int>0': 'must be a whole number > 0',
  'int≥0': 'must be a whole number ≥ 0',
  port: 'must be a port number',
  int: 'must be a whole number',
};
function numberRule(rule: NumberRule, range?: [number, number]): z.ZodNumber {
  const says = range ? `must be a ${rule.startsWith('int') ? 'whole number' : 'number'} from ${range[0]} to ${range[1]}` : SAYS[rule];
  let n = z.number({ message: says }).finite({ message: says });
  if (rule === 'positive') n = n.positive({ message: says });
  if (rule === 'atLeast0') n = n.min(0, { message: says });
  if (rule === 'int>0') n = n.int({ message: says }).positive({ message: says });
  if (rule === 'int≥0') n = n.int({ message: says }).min(0, { message: says });
  if (rule === 'int') n = n.int({ message: says });
  if (rule === 'port') n = n.int({ message: says }).min(0, { message: says }).max(65535, { message: says });
  if (range) n = n.min(range[0], { message: says }).max(range[1], { message: says });
  return n;
}
function num(rule: NumberRule, dflt: number, range?: [number, number]): z.ZodType<number>;
function num(rule: NumberRule, dflt?: undefined, range?: [number, number]): z.ZodType<number | undefined>;
function num(rule: NumberRule, dflt?: number, range?: [number, number]) {
  const rules = numberRule(rule, range);
  const parsed = z.coerce.number({ message: SAYS[rule] }).pipe(rules);
  return z.preprocess(blank, dflt === undefined ? parsed.optional() : parsed.default(dflt)) as z.ZodType<number | undefined>;
}
/** A flag that is on unless set to `off` (or, where it says so, `0`). */
const onUnless = (...off: string[]) => z.preprocess(blank, z.string().optional()).transform((v) => v === undefined || !off.includes(v));

/** A JSON price table: model → US dollars per million tokens, input and output. */
export const modelPriceSchema = z.object({ input: z.number().min(0), output: z.number().min(0) });
export const priceTableSchema = z.record(z.string().min(1), modelPriceSchema);
const priceJson = z.preprocess(blank, z.string().optional()).transform((v, ctx) => {
  if (v === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON like {"llama3":{"input":0,"output":0}}' });
    return z.NEVER;
  }
  const r = priceTableSchema.safeParse(parsed);
  if (!r.success) {
    ctx.addIssue({ code: 'custom', message: `is not a valid price table (${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')})` });
    return z.NEVER;
  }
  return r.data;
});

const HOST_NAME = /^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** Host names (`*.domain` for a domain and below); never an IP address or a bare TLD, which would open far more than a registry. */
const hostList = z.preprocess(blank, z.string().optional()).transform((v, ctx) => {
  const hosts = (v ?? '').split(/[\s,]+/).map((h) => h.trim().toLowerCase().replace(/\.$/, '')).filter(Boolean);
  const bad = hosts.find((h) => !HOST_NAME.test(h) || /^[\d.]+$/.test(h) || !h.replace(/^\*\./, '').includes('.'));
  if (bad !== undefined) ctx.addIssue({ code: 'custom', message: `: ${JSON.stringify(bad)} is not a host name (use names like registry.example.com or *.example.com)` });
  return hosts;
});
const upstreamProxy = z.preprocess(blank, z.string().optional()).transform((v, ctx) => {
  if (v === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a URL like http://proxy.example:3128' });
    return z.NEVER;
  }
  if (url.protocol !== 'http:' || !url.hostname) ctx.addIssue({ code: 'custom', message: 'must be an http:// proxy URL with a host' });
  const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  return { host: url.hostname, port: Number(url.port || 80), ...(auth ? { auth } : {}) };
});
const cpuList = z.preprocess(blank, z.string().regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/, { message: 'must list CPUs like 1-3 or 0,2' }).optional());
const pathList = z.preprocess(blank, z.string().optional()).transform((v) => (v ?? '').split(':').map((p) => p.trim()).filter(Boolean));

const def = <S extends z.ZodType>(group: Group, schema: S, doc: string, more: Omit<Variable, 'group' | 'schema' | 'doc'> = {}): Variable & { schema: S } => ({ group, schema, doc, ...more });

export const VARIABLES = {
  // GitHub App
  APP_ID: def('github', num('int>0'), "the App's id (Probot's setup flow writes it into `.env`)"),
  PRIVATE_KEY: def('github', text(), "the App's private key (PEM), inline; a worker refuses to start without it or `PRIVATE_KEY_PATH`", { secret: true }),
  PRIVATE_KEY_PATH: def('github', text(), "the App's private key, as a file path"),
  WEBHOOK_SECRET: def('github', text(), "required: every delivery's HMAC signature is checked against it", { secret: true }),
  WEBHOOK_PATH: def('github', textOr('/api/github/webhooks'), 'where webhooks come in'),
  WEBHOOK_PROXY_URL: def('github', text(), 'a smee.io channel to take deliveries from (signatures intact) when there is no public address', { secret: true }),
  NO_SMEE_SETUP: def('github', text(), "`true`: Probot's setup flow proposes no smee.io channel", { readBy: 'Probot' }),
  HOST: def('github', textOr('localhost'), "where the App's HTTP server listens (the container image sets `HOST=0.0.0.0`)"),
  PORT: def('github', num('port', 3000), "the App's HTTP port"),
  NODE_ENV: def('github', text(), "`production`: the App requires its credentials instead of serving Probot's setup flow", { readBy: 'Probot' }),
  GHE_HOST: def('github', text(), 'GitHub Enterprise Server: API at `<protocol>://<host>/api/v3`, clones from `<protocol>://<host>/<owner>/<repo>.git`'),
  GHE_PROTOCOL: def('github', oneOfOr(['https', 'http'], 'https'), "GitHub Enterprise Server's protocol"),
  GITHUB_TOKEN: def('github', text(), "the CLI's token for `swt reproduce <issue URL>` and `swt validate <PR URL>`", { secret: true }),
  SWT_GITHUB_THROTTLE: def('github', onUnless('off'),
    "`off` lifts Probot's throttling to GitHub's secondary rate limits (for a GHES without rate limits, or a fake GitHub)",
    { default: '`on`' },
  ),
  // Processes and storage
  SWT_ROLE: def('processes', oneOfOr(['web', 'worker', 'all'], 'all'), '`web` (receive webhooks only), `worker` (run jobs only) or `all`'),
  SWT_DATA_DIR: def('processes', text(), 'the SQLite queue and store, and the repository cache', { default: '`~/.cache/swt-bot/app`' }),
  SWT_CACHE_DIR: def('processes', text(),
    'host-side locks, environment-image use times, the coverage counts cache, local models and repositories of `swt eval`',
    { default: '`~/.cache/swt-bot`' },
  ),
  REDIS_URL: def('processes', text(),
    'queue (BullMQ), store and heartbeats in Redis, shared by every process; unset: SQLite in `SWT_DATA_DIR`',
    { secret: true },
  ),
  SWT_REDIS_PREFIX: def('processes', z.preprocess(blank, z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/, { message: 'must be letters, digits, . _ or -' }).default('swt')),
    'prefix of every Redis key (letters, digits, `.`, `_`, `-`; at most 40)',
    { default: '`swt`' },
  ),
  SWT_HEARTBEAT_SECONDS: def('processes', num('positive', 10), "how often a worker reports itself (and its engine's free disk)", { unit: 's' }),
  SWT_REPO_CONCURRENCY: def('processes', num('int>0', 2), 'heavy jobs (containers) of one repository at once, over every worker'),
  SWT_STATUS_TOKEN: def('processes', text(), 'bearer token for `GET /swt` and `/metrics`; unset, both are off', { secret: true }),
  LOG_LEVEL: def('processes', oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    "pino's level; `swt -v` sets `info`",
    { default: '`info` (App), `warn` (CLI)' },
  ),
  // HTTP server
  SWT_WEBHOOK_BUFFER_MIB: def('http', num('positive', 40),
    'what webhook bodies being read at once may hold together (`SWT_WEBHOOK_RESERVE_MIB` of it stays for small bodies); beyond: 503',
    { unit: 'MiB' },
  ),
  SWT_WEBHOOK_RESERVE_MIB: def('http', num('atLeast0', 8),
    'the part of the buffer only bodies up to `SWT_WEBHOOK_SMALL_KIB` may use; less than the buffer',
    { unit: 'MiB' },
  ),
  SWT_WEBHOOK_SMALL_KIB: def('http', num('positive', 256),
    "a body this size or smaller may use the reserve (GitHub's usual deliveries are a few KiB)",
    { unit: 'KiB' },
  ),
  SWT_WEBHOOK_CLIENT_BODIES: def('http', num('int>0', 16), 'webhook bodies one address (IPv6: its /64) may have in flight'),
  SWT_WEBHOOK_CLIENT_MIB: def('http', num('positive', 26),
    "what one address's bodies in flight may declare together (room for GitHub's largest, 25 MB)",
    { unit: 'MiB' },
  ),
  SWT_WEBHOOK_BODY_IDLE_MS: def('http', num('positive', 5000), 'a body with no new byte for this long is cut (408)', { unit: 'ms' }),
  SWT_HTTP_MAX_CONNECTIONS: def('http', num('positive', 256), 'open connections'),
  SWT_HTTP_HEADERS_TIMEOUT_MS: def('http', num('positive', 10_000), 'time a client has to send its headers (at most the request timeout)', { unit: 'ms' }),
  SWT_HTTP_REQUEST_TIMEOUT_MS: def('http', num('positive', 15_000), 'time a client has to send a whole request (GitHub gives up after 10 s)', { unit: 'ms' }),
  // Spend and fairness
  SWT_DAILY_TOKENS: def('spend', num('atLeast0', 2_000_000),
    "each installation's LLM tokens per UTC day; reached: nothing new starts, one comment says so",
    { unit: 'tokens' },
  ),
  SWT_DAILY_USD: def('spend', num('atLeast0', 10), "each installation's LLM spend per UTC day", { unit: 'USD' }),
  SWT_DAILY_CONTAINER_MINUTES: def('spend', num('atLeast0', 600), "each installation's container time per UTC day", { unit: 'min' }),
  SWT_AUTHOR_RUNS_PER_HOUR: def('spend', num('atLeast0', 10),
    "new reproductions and checks one author (the webhook's sender) may cause per hour; maintainers' commands and re-runs are not counted",
  ),
  SWT_MAX_LINKED_ISSUES: def('spend', num('atLeast0', 5), 'linked issues one PR check covers (at least 1); the rest are named and not run'),
  // LLM
  OPENAI_API_KEY: def('llm', text(),
    'the key of an OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama, …); with neither it nor `OPENAI_BASE_URL`, only the `snippet` strategy runs',
    { secret: true },
  ),
  OPENAI_BASE_URL: def('llm', z.preprocess(blank, z.url({ message: 'must be a URL' }).optional()), 'the endpoint (local servers often need no key)'),
  OPENAI_API_VERSION: def('llm', text(), "Azure's `api-version` for deployment-style endpoints"),
  SWT_LLM_MODEL: def('llm', text(),
    'the model; `local:qwen2.5-coder-1.5b` or `local:qwen2.5-coder-0.5b` runs a small code model in the process through node-llama-cpp, priced at 0 ([generation](generation.md#a-local-model-built-in))',
    { default: '`gpt-4o-mini`' },
  ),
  OPENAI_MODEL: def('llm', text(), 'the model, when `SWT_LLM_MODEL` is unset'),
  SWT_LLM_MODELS: def('llm', z.preprocess(blank, z.string().optional()).transform((v) => (v ?? '').split(',').map((m) => m.trim()).filter(Boolean)),
    "comma-separated models a repository's `generation.model` may pick; each needs a price",
    { default: '`SWT_LLM_MODEL`' },
  ),
  SWT_LLM_PRICES: def('llm', priceJson,
    'JSON price table merged over the built-in one (`{"llama3":{"input":0,"output":0}}`, or a `default`); an unpriced model is refused before any call',
    { default: 'built-in table', unit: 'USD / M tokens' },
  ),
  SWT_LLM_TEMPERATURE: def('llm', num('atLeast0', undefined, [0, 2]), 'sampling temperature', { default: '0' }),
  SWT_LLM_TIMEOUT_MS: def('llm', num('int>0'), 'per request (a local model: 15 min unless set)', { default: '120000', unit: 'ms' }),
  SWT_LLM_MAX_RETRIES: def('llm', num('int≥0', undefined, [0, 10]), 'retries of 429 and 5xx, with backoff', { default: '3' }),
  SWT_LLM_TOOL_MODE: def('llm', oneOf(['auto', 'native', 'text']),
    '`native` tool calls, `text` protocol for models without tools, or `auto`',
    { default: '`auto`' },
  ),
  SWT_LLM_MAX_OUTPUT_TOKENS: def('llm', num('int>0'), "cap on one answer's tokens", { unit: 'tokens' }),
  SWT_LLM_SEED: def('llm', num('int'), 'the sampling seed, so a run at temperature 0 repeats (the local model honours it)'),
  // Local model and budget
  SWT_MODEL_DIR: def('local', text(), 'where `swt model pull` puts model files (size and sha256 checked)', { default: '`~/.cache/swt-bot/models`' }),
  SWT_LOCAL_THREADS: def('local', num('int>0', undefined, [1, 64]),
    'CPU threads for the local model (two were slower on a loaded 2-core machine)',
    { default: '1' },
  ),
  SWT_LOCAL_CONTEXT_TOKENS: def('local', num('int>0', undefined, [512, 32_768]),
    'the context kept to: retrieval is sized to it; a longer prompt is cut in the middle with a marker, or refused',
    { default: '4096', unit: 'tokens' },
  ),
  SWT_LOCAL_CONTEXTS: def('local', num('int>0', undefined, [1, 8]),
    'contexts kept per model, each reused by its last client so a conversation\'s prefix is not evaluated again',
    { default: '1' },
  ),
  SWT_LOCAL_MAX_MEMORY_MB: def('local', num('int>0'), 'refuse to load a model whose GGUF header says it needs more', { unit: 'MB' }),
  SWT_PIP: def('local', textOr('python3 -m pip'), 'the pip `swt model pull` runs (wheels only, no dependencies)'),
  SWT_PYTHON: def('local', textOr('python3'), 'the python `swt model pull` runs'),
  SWT_SERVE_API_KEY: def('local', text(), '`swt model serve`: the bearer key its OpenAI-compatible endpoint requires (`--api-key`)', { secret: true }),
  SWT_BUDGET_TOKENS: def('local', num('int>0', 200_000), 'hard budget per issue; when it runs out the run stops and keeps what it has', { unit: 'tokens' }),
  SWT_BUDGET_USD: def('local', num('positive', 1), 'hard LLM spend per issue', { unit: 'USD' }),
  SWT_BUDGET_STEPS: def('local', num('int>0', 30), 'hard number of LLM calls per issue'),
  SWT_BUDGET_WALL_MS: def('local', num('int>0', 600_000), 'hard wall time per issue', { unit: 'ms' }),
  // Ceilings
  SWT_MAX_TIMEOUT_SECONDS: def('ceilings', num('positive', 1800), 'wall-clock time', { unit: 's' }),
  SWT_MAX_MEMORY_MIB: def('ceilings', num('positive', 8192), 'memory', { unit: 'MiB' }),
  SWT_MAX_PIDS: def('ceilings', num('positive', 4096), 'processes'),
  SWT_MAX_CPUS: def('ceilings', num('positive', 4), 'CPUs'),
  SWT_MAX_DISK_MIB: def('ceilings', num('positive', 10_240), 'disk (and files: one per 16 KiB)', { unit: 'MiB' }),
  SWT_MAX_OUTPUT_BYTES: def('ceilings', num('positive', 1_048_576), 'stdout and stderr kept', { unit: 'bytes' }),
  // Sandbox
  DOCKER_HOST: def('sandbox', text(), 'the Docker engine (`tcp://host:2376` with TLS, or `ssh://user@host`)', { default: 'local socket' }),
  DOCKER_TLS_VERIFY: def('sandbox', text(), "`1`: TLS to the engine at `DOCKER_HOST`", { readBy: 'docker-modem' }),
  DOCKER_CERT_PATH: def('sandbox', text(), "the engine's TLS certificates", { readBy: 'docker-modem' }),
  SWT_PULL: def('sandbox', onUnless('never'), '`never`: ask no registry for base images, build them offline'),
  SWT_DEBIAN_MIRROR: def('sandbox', textOr('http://deb.debian.org/debian'), 'where `debootstrap` fetches offline-built base images'),
  SWT_EXTRA_CA_CERTS: def('sandbox', pathList,
    'colon-separated PEM files baked into every image (TLS-intercepting proxies; `scripts/dev` uses the host\'s bundle)',
  ),
  NODE_EXTRA_CA_CERTS: def('sandbox', pathList, "Node's own: the PEM files baked into every image when `SWT_EXTRA_CA_CERTS` is unset"),
  SWT_ENV_CACHE_GB: def('sandbox', num('positive', 20), 'environment images kept, least recently used evicted past it', { unit: 'GB' }),
  SWT_ENV_LEASE_SECONDS: def('sandbox', num('atLeast0', 300), 'an image used this recently is never evicted', { unit: 's' }),
  SWT_ENV_NAMESPACE: def('sandbox', z.preprocess(blank, z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, { message: 'must be lowercase letters, digits, - or _' }).default('default')),
    'namespace of environment images (tests use their own)',
    { default: '`default`' },
  ),
  SWT_PKG_CACHE_GB: def('sandbox', num('atLeast0', 10),
    "package cache volumes' total size; caches of repositories gone from the host are removed",
    { unit: 'GB' },
  ),
  SWT_NEAREST_LAYER: def('sandbox', onUnless('0'), '`0` turns off building from the nearest dependency layer', { default: 'on' }),
  SWT_INSTALL_TIMEOUT_MS: def('sandbox', num('positive'), 'install step time limit', { default: '1200000', unit: 'ms' }),
  SWT_DEPENDENCIES_AS_OF: def('sandbox', oneOf(['auto', 'base', 'today']),
    '`auto`: a base commit older than 30 days installs what its day allowed (uv `--exclude-newer`, npm `--before`); `base`: always; `today`: never ([ecosystems](ecosystems.md#old-commits-install-as-they-were))',
    { default: '`auto`' },
  ),
  SWT_EGRESS_ALLOW: def('sandbox', hostList, 'more hosts installs may reach (`npm.corp.example, *.pkg.corp.example`)'),
  SWT_EGRESS_UPSTREAM: def('sandbox', upstreamProxy,
    'a corporate proxy (`http://[user:pass@]host:port`) the allowed traffic goes through; its CA goes in `SWT_EXTRA_CA_CERTS`',
    { secret: true },
  ),
  SWT_CPUSET_CPUS: def('sandbox', cpuList, 'host CPUs installs and test runs may use (`1-3`), keeping the others free for webhooks'),
  SWT_WARM_CONTAINERS: def('sandbox', num('int≥0', 3), 'idle run containers the App starts ahead per environment in use (0: none)'),
  SWT_WARM_IDLE_SECONDS: def('sandbox', num('positive', 600), 'how long an idle warm container waits', { unit: 's' }),
  SWT_DOCTOR_MIN_FREE_GB: def('sandbox', num('atLeast0', 5), '`swt doctor` fails below this much free disk', { unit: 'GB' }),
} satisfies Record<string, Variable>;

export type VariableName = keyof typeof VARIABLES;

/** Each variable's parsed value: a number, a string, a flag or a list, with its default applied. */
export type EnvValues = { [K in VariableName]: z.output<(typeof VARIABLES)[K]['schema']> };
