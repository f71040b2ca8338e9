#!/usr/bin/env node
/**
 * Builds fixtures/swebench from SWE-bench rows and upstream mirrors: a repository's whole history is
 * too big to keep (Django's is 637 MB), so each instance gets a snapshot, a root commit holding the
 * base commit's own tree with its author, committer and dates (what time-consistent installs read),
 * as a branch named after the instance in `<owner>__<name>.bundle`. The row keeps the upstream sha
 * (`upstream_base_commit`) and takes the snapshot's as its base_commit. The same inputs give the
 * same shas.
 *
 *   node scripts/swebench-snapshots.mjs <rows.jsonl> <mirrors> <out dir>
 *
 * <mirrors>/<owner>+<name>/repo or <mirrors>/<owner>__<name>: a bare clone holding the base commits.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [rowsFile, mirrors, out] = process.argv.slice(2);
if (!rowsFile || !mirrors || !out) {
  console.error('usage: node scripts/swebench-snapshots.mjs <rows.jsonl> <mirrors> <out dir>');
  process.exit(2);
}
const KEEP = ['instance_id', 'repo', 'base_commit', 'upstream_base_commit', 'created_at', 'version', 'problem_statement', 'patch', 'test_patch', 'FAIL_TO_PASS', 'PASS_TO_PASS', 'incorrect_patch', 'sources'];

const git = (dir, args, env = {}) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 28 }).trim();

function mirrorOf(repo) {
  const [owner, name] = repo.split('/');
  for (const dir of [join(mirrors, `${owner}+${name}`, 'repo'), join(mirrors, `${owner}__${name}`)]) if (existsSync(dir)) return resolve(dir);
  throw new Error(`no mirror of ${repo} under ${mirrors}`);
}

const rows = readFileSync(rowsFile, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const byRepo = new Map();
for (const r of rows) byRepo.set(r.repo, [...(byRepo.get(r.repo) ?? []), r]);
mkdirSync(join(out, 'repos'), { recursive: true });
const written = [];
for (const [repo, list] of byRepo) {
  const mirror = mirrorOf(repo);
  // A bare repository of our own that borrows the mirror's objects: the mirror is left as it was.
  const work = mkdtempSync(join(tmpdir(), 'swt-snapshots-'));
  try {
    git(work, ['init', '-q', '--bare']);
    writeFileSync(join(work, 'objects', 'info', 'alternates'), `${join(mirror, 'objects')}\n`);
    for (const r of list) {
      const upstream = r.upstream_base_commit ?? r.base_commit;
      const [an, ae, ad, cn, ce, cd] = git(mirror, ['log', '-1', '--format=%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI', upstream]).split('\0');
      const message = `SWE-bench ${r.instance_id}: the tree of ${repo}@${upstream}\n\nA snapshot without history, for swt-bot's fixtures.\n`;
      const env = { GIT_AUTHOR_NAME: an, GIT_AUTHOR_EMAIL: ae, GIT_AUTHOR_DATE: ad, GIT_COMMITTER_NAME: cn, GIT_COMMITTER_EMAIL: ce, GIT_COMMITTER_DATE: cd };
      const sha = execFileSync('git', ['commit-tree', `${upstream}^{tree}`], { cwd: work, input: message, encoding: 'utf8', env: { ...process.env, ...env } }).trim();
      git(work, ['update-ref', `refs/heads/${r.instance_id}`, sha]);
      written.push(Object.fromEntries(KEEP.filter((k) => r[k] !== undefined || k === 'upstream_base_commit').map((k) => [k, k === 'base_commit' ? sha : k === 'upstream_base_commit' ? upstream : r[k]])));
    }
    const bundle = resolve(out, 'repos', `${repo.replace('/', '__')}.bundle`);
    git(work, ['bundle', 'create', '-q', bundle, '--branches']);
    console.error(`${repo}: ${list.length} snapshot(s) in ${bundle}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
written.sort((a, b) => a.instance_id.localeCompare(b.instance_id));
writeFileSync(join(out, 'instances.jsonl'), written.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.error(`${written.length} instance(s) in ${join(out, 'instances.jsonl')}`);
