import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IssueInput } from '../generation/types.js';
import { git as runGit } from '../repo/gitExec.js';
import { parseIssueMarkdown } from '../generation/issueText.js';

/** The project's own small bug-fix repositories, shipped in fixtures/ (no ../shared needed). */
export const FIXTURE_NAMES = ['py-durations', 'ts-chunk', 'go-durations', 'cpp-clampx'] as const;
export type FixtureName = (typeof FIXTURE_NAMES)[number];

/** A SWE-bench style instance, plus the optional environment fields swt understands. */
export interface FixtureInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  patch: string;
  test_patch: string;
  problem_statement: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  image: string;
  install: string;
  test_cmd: string;
  fix_commit: string;
}

export interface FixtureRepo {
  name: FixtureName;
  /** A git working tree: base commit, then the fix commit (code fix + golden test) on top. */
  dir: string;
  base: string;
  head: string;
  issue: IssueInput;
  instance: FixtureInstance;
  cleanup(): Promise<void>;
}

export function fixturesRoot(): string {
  // dist/demo/x.js and src/demo/x.ts sit two levels below the package root, dist-bench/src/demo/x.js three.
  const here = fileURLToPath(new URL('.', import.meta.url));
  const root = [resolve(here, '..', '..'), resolve(here, '..', '..', '..')].find((d) => existsSync(join(d, 'package.json')) && existsSync(join(d, 'fixtures')));
  return join(root ?? resolve(here, '..', '..'), 'fixtures');
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'swt-fixture',
  GIT_AUTHOR_EMAIL: 'fixture@swt.invalid',
  GIT_COMMITTER_NAME: 'swt-fixture',
  GIT_COMMITTER_EMAIL: 'fixture@swt.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

async function git(dir: string, ...args: string[]): Promise<string> {
  return (await runGit(dir, ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], { env: GIT_ENV })).trim();
}

/** Builds the fixture's git repository in a fresh temp dir (`parent` to choose where). */
export async function createFixtureRepo(name: FixtureName, parent?: string): Promise<FixtureRepo> {
  const src = join(fixturesRoot(), name);
  const root = await mkdtemp(join(parent ?? tmpdir(), `swt-fixture-${name}-`));
  const dir = join(root, name);
  try {
    await cp(join(src, 'repo'), dir, { recursive: true });
    await git(dir, 'init', '-q');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-q', '-m', 'Initial version');
    const base = await git(dir, 'rev-parse', 'HEAD');
    const [patch, testPatch, issueText, meta] = await Promise.all([
      readFile(join(src, 'fix.patch'), 'utf8'),
      readFile(join(src, 'test.patch'), 'utf8'),
      readFile(join(src, 'issue.md'), 'utf8'),
      readFile(join(src, 'instance.json'), 'utf8').then((t) => JSON.parse(t)),
    ]);
    for (const [file, body] of [['.swt-fix.patch', patch], ['.swt-test.patch', testPatch]] as const) {
      await writeFile(join(root, file), body);
      await git(dir, 'apply', join(root, file));
    }
    await git(dir, 'add', '-A');
    const issue = parseIssueMarkdown(issueText);
    await git(dir, 'commit', '-q', '-m', `Fix: ${issue.title}`);
    const head = await git(dir, 'rev-parse', 'HEAD');
    const instance: FixtureInstance = {
      ...meta,
      base_commit: base,
      fix_commit: head,
      patch,
      test_patch: testPatch,
      problem_statement: `${issue.title}\n\n${issue.body}`,
    };
    return { name, dir, base, head, issue, instance, cleanup: () => rm(root, { recursive: true, force: true }) };
  } catch (e) {
    await rm(root, { recursive: true, force: true });
    throw e;
  }
}
