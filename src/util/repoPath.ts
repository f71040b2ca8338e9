import { posix } from 'node:path';
import { SwtError } from './errors.js';

/**
 * Path confinement: the one rule for every path that comes from outside (a model's patch, an
 * agent's tool call, a session read or write). Pure. A path is accepted when, normalised, it stays
 * inside the repository and does not touch `.git`; it may be given absolute under `root` (the
 * repository's mount point in the sandbox).
 */
export interface ConfineOptions {
  /** The repository root inside the sandbox; `<root>/x` is read as `x`. */
  root?: string;
  /** The caller wants a directory: the root itself (`.`) and a trailing `/` are fine. */
  directory?: boolean;
}

export const SANDBOX_REPO_ROOT = '/testbed';

/** The normalised repository-relative path, or SwtError('UNSAFE_PATH') saying why not. */
export function confineRepoPath(raw: string, opts: ConfineOptions = {}): string {
  const root = (opts.root ?? SANDBOX_REPO_ROOT).replace(/\/+$/, '');
  const unsafe = (why: string, hint?: string) => new SwtError('UNSAFE_PATH', `unsafe path ${JSON.stringify(raw)}: ${why}`, hint ? { hint } : {});
  if (typeof raw !== 'string' || raw.trim() === '') throw unsafe('empty');
  if (raw.includes('\0')) throw unsafe('contains a NUL byte');
  let p = raw.trim().replace(/\\/g, '/');
  if (root && (p === root || p.startsWith(`${root}/`))) p = p.slice(root.length + 1) || '.';
  if (p.startsWith('/') || /^[A-Za-z]:\//.test(p) || p.startsWith('~')) {
    throw unsafe('absolute paths are not allowed', 'give a path relative to the repository root');
  }
  if (p.endsWith('/') && !opts.directory) throw unsafe('it names a directory, not a file');
  const norm = posix.normalize(p).replace(/\/+$/, '') || '.';
  if (norm === '..' || norm.startsWith('../')) throw unsafe('it escapes the repository through ".."');
  if (norm.split('/').some((s) => s.toLowerCase() === '.git')) throw unsafe('it targets the .git directory');
  if (norm === '.' && !opts.directory) throw unsafe('it names the repository root, not a file');
  return norm;
}

/** confineRepoPath without the throw: undefined when the path is not acceptable. */
export function tryConfineRepoPath(raw: string, opts: ConfineOptions = {}): string | undefined {
  try {
    return confineRepoPath(raw, opts);
  } catch {
    return undefined;
  }
}
