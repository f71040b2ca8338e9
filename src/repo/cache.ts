/**
 * Host-side git for the App: one bare repository per GitHub repository in a cache directory,
 * into which each job fetches exactly the commits it needs (`git fetch <url> <sha>`), falling
 * back to the refs that hold them (a fork's PR head lives at `refs/pull/<n>/head`).
 *
 * The token reaches git only through the environment of the one fetch command, as an
 * `http.extraHeader` (GIT_CONFIG_*): never in a URL, an argument, the repository's config, a log
 * or an error message.
 */
import { githubWebUrl, type Environment } from '../settings/index.js';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { withFileLock } from '../util/lock.js';
import { runGit } from './gitExec.js';
import { SwtError } from '../util/errors.js';
import { repoSlug } from '../github/types.js';
import type { Logger } from '../util/logger.js';
import { redact } from '../util/secrets.js';

export interface RepoRef {
  owner: string;
  repo: string;
}

/** The web (and git) base URL: `GHE_PROTOCOL://GHE_HOST` for GitHub Enterprise Server, as Probot reads them. */
export function webBaseUrl(env?: Environment): string {
  return githubWebUrl(env);
}

/** `<protocol>://<host>/<owner>/<repo>.git`. */
export function cloneUrl(base: string, r: RepoRef): string {
  return `${base.replace(/\/+$/, '')}/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.repo)}.git`;
}

export interface Want {
  sha: string;
  /** A ref that contains the commit, fetched when the server refuses to serve a commit by id. */
  ref?: string;
}

export interface FetchRequest extends RepoRef {
  url: string;
  /** An installation token or a personal token; none for public repositories. */
  token?: string;
  want: Want[];
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const SAFE_REF = /^refs\/[A-Za-z0-9._\/-]+$/;

/** The git environment that carries the token for one command, and the strings to scrub. */
export function authEnv(token: string | undefined): { env: Record<string, string>; secrets: string[] } {
  const env: Record<string, string> = {
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GIT_CONFIG_COUNT: '1',
    // No credential helper may answer (or store) anything for this command.
    GIT_CONFIG_KEY_0: 'credential.helper',
    GIT_CONFIG_VALUE_0: '',
  };
  if (!token) return { env, secrets: [] };
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  env.GIT_CONFIG_COUNT = '2';
  env.GIT_CONFIG_KEY_1 = 'http.extraHeader';
  env.GIT_CONFIG_VALUE_1 = `Authorization: Basic ${basic}`;
  return { env, secrets: [token, basic] };
}

export class RepoCache {
  readonly root: string;
  readonly #log?: Logger;

  constructor(opts: { root: string; logger?: Logger }) {
    this.root = opts.root;
    this.#log = opts.logger;
  }

  /** Where a repository's bare clone lives. */
  pathOf(url: string, r: RepoRef): string {
    const host = new URL(url).host.replace(/[^A-Za-z0-9.-]/g, '_');
    const part = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
    return join(this.root, host, part(r.owner), `${part(r.repo)}.git`);
  }

  /** The bare repository holding every wanted commit; fetches only what is missing. */
  async ensure(req: FetchRequest): Promise<string> {
    for (const w of req.want) {
      if (!SHA.test(w.sha)) throw new SwtError('BAD_INPUT', `not a commit id: ${w.sha.slice(0, 80)}`);
      if (w.ref && !SAFE_REF.test(w.ref)) throw new SwtError('BAD_INPUT', `not a ref name: ${w.ref.slice(0, 80)}`);
    }
    const dir = this.pathOf(req.url, req);
    return withFileLock(`repo-cache-${dir}`, async () => {
      await this.#init(dir);
      let missing = await this.#missing(dir, req.want);
      if (missing.length === 0) return dir;
      const { env, secrets } = authEnv(req.token);
      const fetch = async (refspecs: string[]) => {
        const r = await runGit(dir, ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', req.url, ...refspecs], { env });
        return { ok: r.code === 0, stderr: redact(r.stderr.trim(), secrets) };
      };
      const started = Date.now();
      // Keep every fetched commit under refs/swt/ so that a gc never drops what a job still uses.
      let r = await fetch(missing.map((w) => `${w.sha}:refs/swt/keep/${w.sha}`));
      if (!r.ok) {
        const refs = [...new Set(missing.map((w) => w.ref).filter((x): x is string => Boolean(x)))];
        const fallback = refs.length ? refs.map((ref) => `+${ref}:refs/swt/mirror/${ref.slice('refs/'.length)}`) : ['+refs/heads/*:refs/swt/mirror/heads/*'];
        this.#log?.debug({ repo: repoSlug(req), err: r.stderr }, 'fetch by commit id refused; fetching refs');
        const second = await fetch(fallback);
        if (!second.ok) r = second;
      }
      missing = await this.#missing(dir, req.want);
      if (missing.length) {
        throw new SwtError('UNKNOWN_REVISION', `cannot fetch ${missing.map((w) => w.sha.slice(0, 12)).join(', ')} from ${repoSlug(req)}${r.ok ? '' : `: ${r.stderr.split('\n').pop()}`}`);
      }
      this.#log?.info({ repo: repoSlug(req), commits: req.want.length, ms: Date.now() - started }, 'fetched into the repository cache');
      return dir;
    });
  }

  async #init(dir: string): Promise<void> {
    const exists = await stat(join(dir, 'HEAD')).then(
      () => true,
      () => false,
    );
    if (exists) return;
    await mkdir(dir, { recursive: true });
    const r = await runGit(dir, ['init', '--quiet', '--bare']);
    if (r.code !== 0) throw new Error(`git init failed in the repository cache: ${r.stderr.trim()}`);
  }

  async #missing(dir: string, want: Want[]): Promise<Want[]> {
    const out: Want[] = [];
    for (const w of want) {
      const r = await runGit(dir, ['cat-file', '-e', `${w.sha}^{commit}`]);
      if (r.code !== 0) out.push(w);
    }
    return out;
  }
}
