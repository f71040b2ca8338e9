import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/util/logger.js';

/** Secrets that reach a log line through the App's own logger come out scrubbed, in every form. */

function capture(env: Record<string, string> = {}) {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let text = '';
  const destination = new Writable({ write: (c, _e, cb) => ((text += c.toString()), cb()) });
  try {
    return { log: createLogger({ level: 'info', destination }), text: () => text };
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

describe('log redaction', () => {
  const pem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const keyLine = pem.split('\n')[2]!;

  it('attack: a multi-line PEM private key in an error message is logged', () => {
    const { log, text } = capture();
    log.error({ err: `bad key file:\n${pem}` }, `could not sign: ${pem}`);
    log.warn(`clipped: ${pem.slice(0, 300)}`);
    expect(text()).not.toContain(keyLine);
    expect(text()).not.toContain(keyLine.slice(0, 20));
    expect(text().match(/\[REDACTED\]/g)?.length).toBe(3);
  });

  it('attack: a secret with a quote and a backslash is logged (pino writes it JSON-escaped)', () => {
    const secret = 'w"eb\\hook-secret-42';
    const { log, text } = capture({ WEBHOOK_SECRET: secret });
    log.info({ body: `signature for ${secret}` }, 'verifying');
    expect(text()).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(text()).not.toContain('hook-secret-42');
    expect(JSON.parse(text()).body).toBe('signature for [REDACTED]');
  });

  // Strings that are logged and redacted; nothing connects to them.
  it('attack: a Redis URL with its password is logged', () => {
    const { log, text } = capture();
    log.warn({ url: 'redis://:Sup3r-pw@redis.invalid:6379/0' }, 'redis connection to rediss://default:An0ther-pw@cache.internal:6380 lost');
    expect(text()).not.toContain('Sup3r-pw');
    expect(text()).not.toContain('An0ther-pw');
    expect(JSON.parse(text()).url).toBe('redis://:[REDACTED]@redis.invalid:6379/0');
  });

  it('attack: a minted installation token (ghs_) is logged', () => {
    const token = `ghs_${'Zq8Lm3Np0Rt5Vx7Yb2Cd4Fg6Hj9Kk1Ss3Uu5'}`;
    const { log, text } = capture();
    log.info({ remote: `https://x-access-token:${token}@github.com/o/r.git` }, `push with ${token} failed`);
    expect(text()).not.toContain(token.slice(4));
    expect(JSON.parse(text()).remote).toBe('https://x-access-token:[REDACTED]@github.com/o/r.git');
  });

  const b64 = (s: string) => Buffer.from(s).toString('base64');

  it('attack: the webhook secret is logged base64- and URL-encoded, alone, inside a basic-auth pair, and URL-safe', () => {
    const secret = 'we/b+hook secret?42';
    const { log, text } = capture({ WEBHOOK_SECRET: secret });
    const encoded = [b64(secret), b64(`admin:${secret}`), b64(`ab:${secret}`), b64(`a:${secret}`), Buffer.from(`a:${secret}`).toString('base64url'), encodeURIComponent(secret), encodeURIComponent(secret).toLowerCase()];
    log.info({ forms: encoded }, `sent Authorization: Basic ${b64(`app:${secret}`)} to ?secret=${encodeURIComponent(secret)}`);
    const line = text();
    // No 8-character run of any encoding of the secret survives (its bits sit in those).
    for (const e of [...encoded, b64(`app:${secret}`)]) for (let i = 8; i + 8 <= e.length - 2; i += 4) expect(line).not.toContain(e.slice(i, i + 8));
    expect(line).not.toContain('hook');
    expect(line.match(/\[REDACTED\]/g)?.length).toBe(encoded.length + 2);
  });

  it("attack: an installation token (ghs_) is logged base64-encoded, alone and as git's basic-auth `x-access-token:<token>`", () => {
    const token = `ghs_${'Zq8Lm3Np0Rt5Vx7Yb2Cd4Fg6Hj9Kk1Ss3Uu5'}`;
    const { log, text } = capture();
    log.info({ header: `AUTHORIZATION: basic ${b64(`x-access-token:${token}`)}`, alone: b64(token), pair: b64(`x-access-token:${token}`) }, 'git -c http.extraheader');
    const parsed = JSON.parse(text());
    expect(parsed).toMatchObject({ header: 'AUTHORIZATION: basic [REDACTED]', alone: '[REDACTED]', pair: '[REDACTED]' });
  });

  it("attack: the Redis password (REDIS_URL's) is logged outside its URL: bare, URL-encoded, base64 in an AUTH pair", () => {
    const { log, text } = capture({ REDIS_URL: 'rediss://default:R3dis%2Fpw-0815@cache.internal:6380/0' });
    log.error({ reply: 'WRONGPASS for R3dis/pw-0815', sent: b64('default:R3dis/pw-0815'), url: encodeURIComponent('R3dis/pw-0815') }, 'AUTH R3dis/pw-0815 refused');
    expect(text()).not.toContain('pw-0815');
    expect(text()).not.toContain(b64('default:R3dis/pw-0815').slice(12));
    expect(JSON.parse(text())).toMatchObject({ msg: 'AUTH [REDACTED] refused', reply: 'WRONGPASS for [REDACTED]', url: '[REDACTED]' });
  });
});
