/**
 * Secrets never enter a container, a prompt or a log. Values of environment variables whose
 * names look secret are collected once and scrubbed from any text that leaves the process, as
 * written and in their JSON-escaped form (a log line is JSON); secrets that never sit in the
 * environment by name (a PEM private key, a minted GitHub token, a Redis URL's password) are
 * scrubbed by their shape.
 */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE|CREDENTIAL|AUTH)/i;
const MIN_SECRET_LENGTH = 8;
export const REDACTED = '[REDACTED]';

/** The forms a value takes in text: as is, JSON-escaped, and (PEM, multi-line) each long line of it. */
function forms(value: string): string[] {
  const out = [value];
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) out.push(escaped);
  if (value.includes('\n')) for (const line of value.split(/\r?\n/)) if (line.trim().length >= 16 && !/^-----/.test(line.trim())) out.push(line.trim());
  return out;
}

export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= MIN_SECRET_LENGTH && SECRET_NAME.test(name)) for (const f of forms(value)) out.add(f);
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
  // The password of a redis:// or rediss:// URL (`redis://:pw@host`, `rediss://user:pw@host`).
  [/\b(rediss?:\/\/[^:@/\s"']*:)[^@\s"']+@/g, (_m, head: string) => `${head}${REDACTED}@`],
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
