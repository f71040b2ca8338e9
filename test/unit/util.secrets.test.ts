import { generateKeyPairSync } from 'node:crypto';
import { redact, secretValues, isSecretName } from '../../src/util/secrets.js';
import { SwtError } from '../../src/util/errors.js';

describe('secrets', () => {
  it('collects values of secret-named variables and scrubs them', () => {
    const env = { OPENAI_API_KEY: 'sk-test-1234567890', GITHUB_TOKEN: 'ghp_abcdefghijkl', HOME: '/root/home/dir' };
    const secrets = secretValues(env);
    expect(secrets).toEqual(expect.arrayContaining(['sk-test-1234567890', 'ghp_abcdefghijkl']));
    expect(secrets).not.toContain('/root/home/dir');
    expect(redact('key=sk-test-1234567890 tok=ghp_abcdefghijkl', secrets)).toBe('key=[REDACTED] tok=[REDACTED]');
    expect(isSecretName('PRIVATE_KEY_PATH')).toBe(true);
    expect(isSecretName('PATH')).toBe(false);
  });
  it('scrubs a multi-line PEM private key, as written, JSON-escaped, cut short, and line by line from the environment', () => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const body = pem.split('\n')[3]!;
    for (const text of [`key:\n${pem}done`, JSON.stringify({ msg: `key ${pem} done` }), `clipped ${pem.slice(0, 200)}`]) {
      const out = redact(text, []);
      expect(out).not.toContain(body.slice(0, 16));
      expect(out).toContain('[REDACTED]');
    }
    // From the environment (PRIVATE_KEY holds it): any one of its lines, e.g. in a wrapped message.
    const secrets = secretValues({ PRIVATE_KEY: pem });
    expect(redact(`line: ${body}`, secrets)).toBe('line: [REDACTED]');
  });
  it('scrubs a secret in its JSON-escaped form', () => {
    const secrets = secretValues({ WEBHOOK_SECRET: 'pa"ss\\word\tx' });
    const line = JSON.stringify({ err: 'failed with pa"ss\\word\tx' });
    expect(line).not.toContain('pa"ss');
    expect(redact(line, secrets)).toBe(JSON.stringify({ err: 'failed with [REDACTED]' }));
  });
  it('scrubs the password of Redis URLs', () => {
    expect(redact('connecting to redis://:s3cretpw@redis.invalid:6379/0', [])).toBe('connecting to redis://:[REDACTED]@redis.invalid:6379/0');
    expect(redact('{"url":"rediss://default:Tr1cky-pw@cache.example:6380"}', [])).toBe('{"url":"rediss://default:[REDACTED]@cache.example:6380"}');
    expect(redact('redis://127.0.0.1:6379', [])).toBe('redis://127.0.0.1:6379');
  });
  it('scrubs minted GitHub tokens (installation ghs_, and the other kinds)', () => {
    const ghs = 'ghs_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    expect(redact(`Authorization: token ${ghs}`, [])).toBe('Authorization: token [REDACTED]');
    expect(redact(`https://x-access-token:${ghs}@github.com/o/r.git`, [])).toBe('https://x-access-token:[REDACTED]@github.com/o/r.git');
    expect(redact('ghp_abcdefghijklmnopqrstuvwxyz0123 github_pat_11ABCDEFG0123456789_abcdefghijkl', [])).toBe('[REDACTED] [REDACTED]');
    expect(redact('ghs_short and the ghost_of_a_word', [])).toBe('ghs_short and the ghost_of_a_word');
  });
  it('collects each secret in its encodings (URL, base64 whole and at each offset, URL-safe) and the password of URLs in the environment', () => {
    const secrets = secretValues({ WEBHOOK_SECRET: 'a b/c+d?e', REDIS_URL: 'redis://:Pw%40redis99@redis.invalid:6379', PROXY: 'http://user:Prox-pw-77@proxy.invalid:3128', SHORT_URL: 'redis://:pw@h', PATH: '/usr/bin' });
    expect(secrets).toEqual(expect.arrayContaining(['a b/c+d?e', 'a%20b%2Fc%2Bd%3Fe', 'a+b%2Fc%2Bd%3Fe', Buffer.from('a b/c+d?e').toString('base64'), 'Pw@redis99', 'Pw%40redis99', 'Prox-pw-77']));
    // A password under 8 characters, like any short value, is left: it would blank common words.
    expect(secrets).not.toContain('pw');
    expect(secrets).not.toContain('/usr/bin');
    for (const user of ['', 'u:', 'us:', 'usr:']) {
      const pair = Buffer.from(`${user}a b/c+d?e`);
      for (const enc of [pair.toString('base64'), pair.toString('base64url')]) expect(redact(`h ${enc} t`, secrets)).toMatch(/^h \S{0,8}\[REDACTED\]\S{0,3} t$/);
    }
    // Ordinary text is untouched.
    expect(redact('GET /repos/o/r/pulls?state=open 200 in 31 ms', secrets)).toBe('GET /repos/o/r/pulls?state=open 200 in 31 ms');
  });
  it('scrubs Authorization headers and base64 GitHub tokens by their shape', () => {
    const ghs = 'ghs_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    for (const kind of ['ghp_', 'gho_', 'ghu_', 'ghr_', 'ghs_']) expect(redact(Buffer.from(kind + ghs.slice(4)).toString('base64'), [])).toBe('[REDACTED]');
    expect(redact(Buffer.from('github_pat_11ABCDEFG0123456789_abcdefghijkl').toString('base64'), [])).toBe('[REDACTED]');
    expect(redact(`-c http.extraheader=AUTHORIZATION: basic ${Buffer.from(`x-access-token:${ghs}`).toString('base64')}`, [])).toBe('-c http.extraheader=AUTHORIZATION: basic [REDACTED]');
    expect(redact('{"authorization":"Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln"}', [])).toBe('{"authorization":"Bearer [REDACTED]"}');
    expect(redact('the authorization step failed', [])).toBe('the authorization step failed');
  });
  it('renders errors on one line with the hint', () => {
    const e = new SwtError('DOCKER_UNREACHABLE', 'cannot reach Docker\nat /var/run/docker.sock', { hint: 'start dockerd' });
    expect(e.oneLine()).toBe('cannot reach Docker at /var/run/docker.sock (start dockerd)');
  });
});
