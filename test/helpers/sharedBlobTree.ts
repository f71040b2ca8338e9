import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TempRepo } from './gitRepo.js';

/**
 * A commit whose many paths all name one blob, made without checking anything out on the host:
 * the blob is written by `git hash-object -w` from a stream of zeros (git compresses it to almost
 * nothing), the tree by `git update-index --index-info` in a throwaway index. 40 paths → a 99 MiB
 * blob is 3.9 GiB checked out from well under 1 MB of objects.
 */
export function commitSharedBlob(repo: TempRepo, opts: { bytes: number; paths: string[]; message?: string }): { sha: string; blob: string } {
  const env = { ...process.env, GIT_AUTHOR_NAME: 'attacker', GIT_AUTHOR_EMAIL: 'a@example.invalid', GIT_COMMITTER_NAME: 'attacker', GIT_COMMITTER_EMAIL: 'a@example.invalid' };
  const blob = execFileSync('sh', ['-c', `head -c ${opts.bytes} /dev/zero | git hash-object -w --stdin`], { cwd: repo.path, encoding: 'utf8', env }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'swt-test-index-'));
  try {
    const ienv = { ...env, GIT_INDEX_FILE: join(dir, 'index') };
    const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo.path, encoding: 'utf8', env: ienv, input, maxBuffer: 64 * 1024 ** 2 }).trim();
    git(['read-tree', repo.sha]);
    git(['update-index', '--index-info'], opts.paths.map((p) => `100644 ${blob}\t${p}`).join('\n') + '\n');
    const tree = git(['write-tree']);
    const sha = git(['commit-tree', tree, '-p', repo.sha, '-m', opts.message ?? 'many paths, one blob']);
    return { sha, blob };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bytes of the repository's object directory (what the attacker pushes, roughly). */
export function objectBytes(repo: TempRepo): number {
  return Number(execFileSync('du', ['-sb', join(repo.path, '.git', 'objects')], { encoding: 'utf8' }).split(/\s+/)[0]);
}
