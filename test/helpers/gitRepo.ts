import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, chmodSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Small temporary git repositories for tests: create one with some files, commit more, read shas,
 * remove them all at the end. Directories are named `swt-testrepo-<pid>-*` in the temp dir.
 */

export interface TempRepo {
  path: string;
  /** Sha of the latest commit made through this helper. */
  sha: string;
  /** Writes files (null deletes one; a value starting with `#!` is made executable) and commits. */
  commit(files: Record<string, string | null>, message?: string): string;
  git(...args: string[]): string;
  cleanup(): void;
}

const created = new Set<string>();
const commits = new Set<string>();

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'swt test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'swt test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return { ...env, ...GIT_ENV };
}

export function tempRepoPrefix(): string {
  return `swt-testrepo-${process.pid}-`;
}

/** `date`: every commit's author and committer date (an old project's history). */
export function createGitRepo(files: Record<string, string>, opts: { message?: string; date?: string } = {}): TempRepo {
  const path = mkdtempSync(join(tmpdir(), tempRepoPrefix()));
  created.add(path);
  const dated = opts.date ? { GIT_AUTHOR_DATE: opts.date, GIT_COMMITTER_DATE: opts.date } : {};
  const run = (...args: string[]) => execFileSync('git', args, { cwd: path, env: { ...cleanEnv(), ...dated }, encoding: 'utf8' });
  run('init', '-q', '-b', 'main');
  const repo: TempRepo = {
    path,
    sha: '',
    git: run,
    commit(changes, message = 'change') {
      for (const [rel, content] of Object.entries(changes)) {
        const file = join(path, rel);
        if (content === null) {
          run('rm', '-q', '--', rel);
          continue;
        }
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, content);
        if (content.startsWith('#!')) chmodSync(file, 0o755);
        run('add', '--', rel);
      }
      // A unique trailer: identical repositories made at the same second by two processes differ.
      run('commit', '-q', '--allow-empty', '-m', `${message}\n\nswt-test: ${process.pid} ${randomUUID()}`);
      repo.sha = run('rev-parse', 'HEAD').trim();
      commits.add(repo.sha);
      return repo.sha;
    },
    cleanup() {
      rmSync(path, { recursive: true, force: true });
      created.delete(path);
    },
  };
  repo.commit(files, opts.message ?? 'initial');
  return repo;
}

/** A bare mirror of a repository made with createGitRepo. */
export function createBareMirror(source: TempRepo): TempRepo {
  const path = mkdtempSync(join(tmpdir(), tempRepoPrefix()));
  created.add(path);
  execFileSync('git', ['clone', '-q', '--mirror', source.path, path], { env: cleanEnv() });
  const run = (...args: string[]) => execFileSync('git', args, { cwd: path, env: cleanEnv(), encoding: 'utf8' });
  return {
    path,
    sha: source.sha,
    git: run,
    commit() {
      throw new Error('cannot commit into a bare mirror');
    },
    cleanup() {
      rmSync(path, { recursive: true, force: true });
      created.delete(path);
    },
  };
}

/** A plain directory that is not a git repository. */
export function createPlainDir(): string {
  const path = mkdtempSync(join(tmpdir(), tempRepoPrefix()));
  created.add(path);
  writeFileSync(join(path, 'README'), 'not a repo\n');
  return path;
}

export function cleanupGitRepos(): void {
  for (const p of created) rmSync(p, { recursive: true, force: true });
  created.clear();
}

/** Leftover directories of this process (should be none after cleanupGitRepos). */
export function leftoverGitRepos(): string[] {
  return readdirSync(tmpdir())
    .filter((n) => n.startsWith(tempRepoPrefix()))
    .map((n) => join(tmpdir(), n))
    .filter((p) => existsSync(p));
}

/** Every commit made through this helper in this process (e.g. to find images built from them). */
export function commitsMade(): string[] {
  return [...commits];
}
