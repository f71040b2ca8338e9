import { homedir } from 'node:os';
import { join } from 'node:path';
import { checkSettings } from '../../src/cli/doctor.js';
import { buildProgram } from '../../src/cli/main.js';
import { ceilingsFromEnv } from '../../src/sandbox/containers/ceilings.js';
import { envCacheSettings } from '../../src/sandbox/images/envCache.js';
import { envValues, settingsFrom, VARIABLES, type VariableName } from '../../src/settings/index.js';
import { isSwtError } from '../../src/util/errors.js';

describe('settingsFrom: every delivery-side variable parsed once', () => {
  it('gives the documented defaults for an empty environment', () => {
    const s = settingsFrom({});
    expect(s).toMatchObject({
      role: 'all',
      dataDir: join(homedir(), '.cache', 'swt-bot', 'app'),
      redisPrefix: 'swt',
      githubThrottle: true,
      heartbeatMs: 10_000,
      port: 3000,
      host: 'localhost',
      http: {
        maxConnections: 256,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 15_000,
        webhookBufferBytes: 40 * 1024 * 1024,
        webhook: { reserveBytes: 8 * 1024 * 1024, smallBytes: 256 * 1024, clientBodies: 16, clientBytes: 26 * 1024 * 1024, idleMs: 5000 },
      },
      spend: { daily: { tokens: 2_000_000, usd: 10, containerMs: 600 * 60_000 }, authorStartsPerHour: 10, maxLinkedIssues: 5 },
      repoConcurrency: 2,
      budget: { tokens: 200_000, usd: 1, steps: 30, wallMs: 600_000 },
      warmPool: { size: 3, idleMs: 600_000 },
    });
    expect(s.redisUrl).toBeUndefined();
    expect(s.statusToken).toBeUndefined();
  });

  it('reads set values, trimmed, and keeps the rules (headers timeout within the request timeout, at least one linked issue)', () => {
    const s = settingsFrom({
      SWT_ROLE: 'web',
      SWT_DATA_DIR: '/data',
      REDIS_URL: ' redis://redis.invalid:6379 ',
      SWT_REDIS_PREFIX: 'f1-2',
      SWT_GITHUB_THROTTLE: 'off',
      SWT_HEARTBEAT_SECONDS: '0.5',
      SWT_STATUS_TOKEN: ' t0k ',
      SWT_HTTP_REQUEST_TIMEOUT_MS: '5000',
      SWT_HTTP_HEADERS_TIMEOUT_MS: '9000',
      SWT_WEBHOOK_BUFFER_MIB: '1',
      SWT_WEBHOOK_RESERVE_MIB: '0.5',
      SWT_WEBHOOK_SMALL_KIB: '64',
      SWT_WEBHOOK_CLIENT_BODIES: '4',
      SWT_WEBHOOK_CLIENT_MIB: '2',
      SWT_WEBHOOK_BODY_IDLE_MS: '1500',
      SWT_DAILY_USD: ' 5 ',
      SWT_AUTHOR_RUNS_PER_HOUR: '2.7',
      SWT_MAX_LINKED_ISSUES: '0',
      SWT_REPO_CONCURRENCY: '3',
      SWT_BUDGET_USD: '0.5',
      SWT_WARM_CONTAINERS: '0',
      SWT_WARM_IDLE_SECONDS: '30',
      PORT: '8080',
      HOST: '0.0.0.0',
    });
    expect(s).toMatchObject({ role: 'web', dataDir: '/data', redisUrl: 'redis://redis.invalid:6379', redisPrefix: 'f1-2', githubThrottle: false, heartbeatMs: 500, statusToken: 't0k', repoConcurrency: 3, port: 8080, host: '0.0.0.0' });
    expect(s.http).toEqual({
      maxConnections: 256,
      headersTimeoutMs: 5000,
      requestTimeoutMs: 5000,
      webhookBufferBytes: 1024 * 1024,
      webhook: { reserveBytes: 512 * 1024, smallBytes: 64 * 1024, clientBodies: 4, clientBytes: 2 * 1024 * 1024, idleMs: 1500 },
    });
    expect(s.spend).toEqual({ daily: { tokens: 2_000_000, usd: 5, containerMs: 600 * 60_000 }, authorStartsPerHour: 2, maxLinkedIssues: 1 });
    expect(s.budget.usd).toBe(0.5);
    expect(s.warmPool).toEqual({ size: 0, idleMs: 30_000 });
  });

  it.each([
    [{ SWT_DAILY_USD: 'ten' }, 'SWT_DAILY_USD must be a number ≥ 0, got "ten"'],
    [{ SWT_DAILY_TOKENS: '-1' }, 'SWT_DAILY_TOKENS must be a number ≥ 0, got "-1"'],
    [{ SWT_ROLE: 'boss' }, 'SWT_ROLE must be web, worker or all, got "boss"'],
    [{ SWT_REDIS_PREFIX: 'a b' }, 'SWT_REDIS_PREFIX must be letters, digits, . _ or -, got "a b"'],
    [{ SWT_REPO_CONCURRENCY: '1.5' }, 'SWT_REPO_CONCURRENCY must be a whole number > 0, got "1.5"'],
    [{ SWT_HTTP_MAX_CONNECTIONS: '0' }, 'SWT_HTTP_MAX_CONNECTIONS must be a positive number, got "0"'],
    [{ SWT_WEBHOOK_CLIENT_BODIES: '2.5' }, 'SWT_WEBHOOK_CLIENT_BODIES must be a whole number > 0, got "2.5"'],
    [{ SWT_WEBHOOK_BODY_IDLE_MS: '0' }, 'SWT_WEBHOOK_BODY_IDLE_MS must be a positive number, got "0"'],
    [{ SWT_WEBHOOK_BUFFER_MIB: '8' }, 'SWT_WEBHOOK_RESERVE_MIB must be less than SWT_WEBHOOK_BUFFER_MIB (8), got 8'],
    [{ SWT_HEARTBEAT_SECONDS: 'soon' }, 'SWT_HEARTBEAT_SECONDS must be a positive number, got "soon"'],
    [{ PORT: '80a' }, 'PORT must be a port number, got "80a"'],
    [{ SWT_WARM_CONTAINERS: '-1' }, 'SWT_WARM_CONTAINERS must be a whole number ≥ 0, got "-1"'],
    [{ SWT_WARM_IDLE_SECONDS: '0' }, 'SWT_WARM_IDLE_SECONDS must be a positive number, got "0"'],
  ])('refuses %j with the variable named', (env, message) => {
    expect(() => settingsFrom(env)).toThrow(message);
  });
});

describe('envValues: every variable of the table, parsed once', () => {
  it('reads the current values of an environment that changes between calls (tests set process.env between cases)', () => {
    const env: Record<string, string | undefined> = { SWT_MAX_PIDS: '100' };
    expect(ceilingsFromEnv(env).pids).toBe(100);
    env.SWT_MAX_PIDS = '200';
    expect(ceilingsFromEnv(env).pids).toBe(200);
    delete env.SWT_MAX_PIDS;
    expect(ceilingsFromEnv(env).pids).toBe(4096);
    // The same values: the parse is kept, not done again.
    expect(envValues(env)).toBe(envValues(env));
  });

  it('reads process.env when given no environment, as it is at the call', () => {
    const before = process.env.SWT_ENV_CACHE_GB;
    try {
      process.env.SWT_ENV_CACHE_GB = '3';
      expect(envCacheSettings().maxBytes).toBe(3e9);
      process.env.SWT_ENV_CACHE_GB = '4';
      expect(envCacheSettings().maxBytes).toBe(4e9);
    } finally {
      if (before === undefined) delete process.env.SWT_ENV_CACHE_GB;
      else process.env.SWT_ENV_CACHE_GB = before;
    }
  });

  it('names every refused variable at once, and never echoes a secret', () => {
    let e: unknown;
    try {
      envValues({ SWT_MAX_CPUS: 'many', SWT_LLM_TOOL_MODE: 'magic', OPENAI_BASE_URL: 'not a url', SWT_LLM_PRICES: '{"m":{"input":-1,"output":0}}' });
    } catch (err) {
      e = err;
    }
    expect(isSwtError(e, 'BAD_CONFIG')).toBe(true);
    const message = (e as Error).message;
    expect(message).toContain('SWT_MAX_CPUS must be a positive number, got "many"');
    expect(message).toContain('SWT_LLM_TOOL_MODE must be auto, native or text, got "magic"');
    expect(message).toContain('OPENAI_BASE_URL must be a URL, got "not a url"');
    expect(message).toMatch(/SWT_LLM_PRICES is not a valid price table \(m\.input: /);
    expect(() => envValues({ SWT_EGRESS_UPSTREAM: 'ftp://u:hunter22@proxy.example' })).toThrow('SWT_EGRESS_UPSTREAM must be an http:// proxy URL with a host (value not shown)');
    expect(() => envValues({ APP_ID: 'abc' })).toThrow('APP_ID must be a whole number > 0, got "abc"');
  });

  it('gives every variable a default or none, and an empty value counts as unset', () => {
    const empty = Object.fromEntries(Object.keys(VARIABLES).map((n) => [n, '  ']));
    expect(envValues(empty)).toEqual(envValues({}));
    expect(envValues({}).SWT_LLM_MODELS).toEqual([]);
    expect(envValues({ SWT_LLM_MODELS: 'a, b,,' }).SWT_LLM_MODELS).toEqual(['a', 'b']);
    expect(envValues({ SWT_PULL: 'never', SWT_NEAREST_LAYER: '0' })).toMatchObject({ SWT_PULL: false, SWT_NEAREST_LAYER: false });
  });

  it('swt doctor: a bad value is its one failing check, named; else what is set, secrets by name only', () => {
    expect(checkSettings({ SWT_MAX_PIDS: '-3' })).toMatchObject({ name: 'settings', level: 'fail', detail: expect.stringContaining('SWT_MAX_PIDS must be a positive number, got "-3"') });
    const ok = checkSettings({ SWT_MAX_PIDS: '64', OPENAI_API_KEY: 'sk-planted-0123456789abcdef' });
    expect(ok.level).toBe('ok');
    expect(ok.detail).toContain('SWT_MAX_PIDS=64');
    expect(ok.detail).toContain('OPENAI_API_KEY (set)');
    expect(ok.detail).not.toContain('sk-planted');
    const names = Object.keys(VARIABLES) as VariableName[];
    expect(checkSettings({}).detail).toBe(`none of the ${names.length} variables set: every default applies`);
  });
});

describe('at start', () => {
  it('every swt command but doctor stops on a bad value before it acts, naming the variable', async () => {
    const before = process.env.SWT_MAX_PIDS;
    process.env.SWT_MAX_PIDS = 'abc';
    try {
      // `images` would build base images: the hook refuses before its action runs.
      await expect(buildProgram().exitOverride().parseAsync(['images'], { from: 'user' })).rejects.toThrow('SWT_MAX_PIDS must be a positive number, got "abc"');
    } finally {
      if (before === undefined) delete process.env.SWT_MAX_PIDS;
      else process.env.SWT_MAX_PIDS = before;
    }
  });
});
