/**
 * The read-only pages (/swt, /metrics) are behind SWT_STATUS_TOKEN, sent as `Authorization:
 * Bearer <token>` or `?token=<token>`. Compared in constant time over SHA-256 digests, so neither
 * the content nor the length of the token leaks through timing. No token configured: no access.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The token a request carries, if any. */
export function presentedToken(req: Pick<IncomingMessage, 'headers' | 'url'>): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  const q = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
  return q ?? undefined;
}

export function tokenMatches(expected: string | undefined, presented: string | undefined): boolean {
  if (!expected || presented === undefined) return false;
  return timingSafeEqual(digest(expected), digest(presented));
}

export function authorized(req: Pick<IncomingMessage, 'headers' | 'url'>, expected: string | undefined): boolean {
  return tokenMatches(expected, presentedToken(req));
}
