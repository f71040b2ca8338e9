/**
 * The read-only pages (/swt, /metrics) are behind SWT_STATUS_TOKEN, sent as `Authorization:
 * Bearer <token>`, and only so: a token in the query string lands in access logs, proxies' logs
 * and browser history, so `?token=` is refused. Compared in constant time over SHA-256 digests, so
 * neither the content nor the length of the token leaks through timing. No token configured: no access.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The token a request carries in its Authorization header, if any. */
export function presentedToken(req: Pick<IncomingMessage, 'headers'>): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth !== 'string') return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
}

/** A request that put a token in its URL: refused even when the token is right (it is already in a log). */
export function tokenInQuery(req: Pick<IncomingMessage, 'url'>): boolean {
  return new URL(req.url ?? '/', 'http://x').searchParams.has('token');
}

export function tokenMatches(expected: string | undefined, presented: string | undefined): boolean {
  if (!expected || presented === undefined) return false;
  return timingSafeEqual(digest(expected), digest(presented));
}

export function authorized(req: Pick<IncomingMessage, 'headers' | 'url'>, expected: string | undefined): boolean {
  return !tokenInQuery(req) && tokenMatches(expected, presentedToken(req));
}
