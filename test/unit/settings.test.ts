import { homedir } from 'node:os';
import { join } from 'node:path';
import { settingsFrom } from '../../src/settings/index.js';

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
