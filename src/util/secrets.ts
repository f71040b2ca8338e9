/**
 * Secrets never enter a container, a prompt or a log. Values of environment variables whose
 * names look secret, and the password of any URL in the environment (REDIS_URL's), are collected
 * once and scrubbed from any text that leaves the process: as written, JSON-escaped (a log line
 * is JSON), URL-encoded, and base64-encoded (standard and URL-safe, also inside a longer encoding
 * such as a basic-auth `user:secret` pair). Secrets that never sit in the environment (a PEM
 * private key, a minted GitHub token, a Redis URL's password, an Authorization header) are
 * scrubbed by their shape.
 */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE|CREDENTIAL|AUTH)/i;
const MIN_SECRET_LENGTH = 8;
export const REDACTED = '[REDACTED]';

const urlSafe = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/**
 * The value's base64, whole, and the part of it fixed by the value alone at each of the three
 * offsets it can start at inside a longer encoding (`user:secret`, a token in a JSON body).
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const whole = bytes.toString('base64');
  const out = [whole, urlSafe(whole)];
  for (const k of [0, 1, 2]) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const inner = b64.slice(Math.ceil((4 * k) / 3), Math.floor((4 * (k + bytes.length)) / 3));
    out.push(inner, urlSafe(inner));
  }
  return out;
}

/** The forms a value takes in text: as is, JSON-escaped, URL-encoded, base64, and (PEM, multi-line) each long line of it. */
function forms(value: string): string[] {
  const out = [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), ...base64Forms(value)];
  // Some encoders write %xx in lower case, and forms write a space as +.
  out.push(out[2]!.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), out[2]!.replace(/%20/g, '+'));
  if (value.includes('\n')) for (const line of value.split(/\r?\n/)) if (line.trim().length >= 16 && !/^-----/.test(line.trim())) out.push(line.trim());
  return out;
}

/** The password of a URL (`redis://:pw@host`, a proxy's `http://user:pw@host`), decoded; undefined when it has none. */
function urlPassword(value: string): string | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/\s]*:[^/\s]*@/i.test(value)) return undefined;
  try {
    const pw = new URL(value).password;
    return pw ? decodeURIComponent(pw) : undefined;
  } catch {
    return undefined;
  }
}

export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const out = new Set<string>();
  const add = (value: string | undefined) => {
    if (value && value.length >= MIN_SECRET_LENGTH) for (const f of forms(value)) out.add(f);
  };
  for (const [name, value] of Object.entries(env)) {
    if (value && SECRET_NAME.test(name)) add(value);
    // REDIS_URL's password (and any other URL's in the environment), whatever the variable is called.
    if (value) add(urlPassword(value.trim()));
  }
  return [...out].sort((a, b) => b.length - a.length);
}

const SHAPES: Array<[RegExp, string | ((m: string, ...g: string[]) => string)]> = [
  // A PEM private key, whole (any key type), with its lines as written or escaped.
  [new RegExp(String.raw`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----`, 'g'), REDACTED],
  // A PEM key cut before its END line (a clipped message): from BEGIN to the end of its base64.
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:\\[rn]|[A-Za-z0-9+/=\s])*/g, REDACTED],
  // GitHub tokens: installation (ghs_), OAuth (gho_), user-to-server (ghu_), personal (ghp_, github_pat_), refresh (ghr_).
  [/\b(?:gh[opsur]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b/g, REDACTED],
  // The same tokens base64-encoded: alone (ghs_ → Z2hzX…), or as git's basic-auth pair `x-access-token:<token>`.
  [/\b(?:Z2h[zvw1y]X|Z2l0aHViX3BhdF|eC1hY2Nlc3MtdG9rZW46)[A-Za-z0-9+/_-]{16,}={0,2}/g, REDACTED],
  // The password of a redis:// or rediss:// URL (`redis://:pw@host`, `rediss://user:pw@host`).
  [/\b(rediss?:\/\/[^:@/\s"']*:)[^@\s"']+@/g, (_m, head: string) => `${head}${REDACTED}@`],
  // The credentials of an Authorization header (git's `http.extraheader`, a logged request): Basic, Bearer, token.
  [/\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:basic|bearer|token)\s+)[A-Za-z0-9+/=._~-]{8,}/gi, (_m, head: string) => `${head}${REDACTED}`],
];

export function redact(text: string, secrets: readonly string[] = secretValues()): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  for (const [re, to] of SHAPES) out = out.replace(re, to as string);
  return out;
}

/** Environment variables safe to pass on (e.g. to a container): never those with secret names. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}
