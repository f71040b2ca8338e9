/**
 * The snippet strategy over real issue texts (test/unit/fixtures/issues, each citing its source):
 * every one becomes exactly the test file its fixture holds, or "no reproduction" with the reason.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { splitDiff } from '../../src/patch/diffFiles.js';
import { repoInfoOf, runnerOf } from '../../src/generation/repoFiles.js';
import { planSnippetTest, type SnippetPlan } from '../../src/generation/snippet/index.js';

interface RepoModel {
  test_command: string;
  files: Record<string, string>;
}

interface IssueCase {
  name: string;
  source: string;
  repo: string;
  title: string;
  body: string;
  expect: { path: string; test: string } | { refuse: string };
}

const dir = new URL('./fixtures/issues/', import.meta.url);
const repos: Record<string, RepoModel> = parse(readFileSync(new URL('repos.yaml', dir), 'utf8'));
const cases: IssueCase[] = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml') && f !== 'repos.yaml')
  .sort()
  .map((f) => ({ name: f.replace(/\.yaml$/, ''), ...parse(readFileSync(new URL(f, dir), 'utf8')) }));

function plan(c: IssueCase): Promise<SnippetPlan> {
  const repo = repos[c.repo];
  const info = repoInfoOf(Object.keys(repo.files), repo.test_command, repo.files['package.json'], async (p) => repo.files[p]);
  return planSnippetTest({ title: c.title, body: c.body ?? '' }, info);
}

describe('snippet strategy on real issue texts', () => {
  const plans = new Map<string, SnippetPlan>();
  beforeAll(async () => {
    for (const c of cases) plans.set(c.name, await plan(c));
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const p = plans.get(c.name)!;
    if ('refuse' in c.expect) {
      expect(p).toEqual({ ok: false, reason: c.expect.refuse });
      return;
    }
    if (!p.ok) throw new Error(`no test: ${p.reason}`);
    expect({ path: p.test.path, content: p.test.content }).toEqual({ path: c.expect.path, content: c.expect.test });
    const [file] = splitDiff(p.test.diff);
    expect(file).toMatchObject({ path: c.expect.path, isNew: true });
    expect(file.added.join('\n') + '\n').toBe(c.expect.test);
  });

  it('covers 30+ real issues in Python and JavaScript/TypeScript, every issue shape and runner, and refusals', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
    for (const c of cases) expect(c.source).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/(issues|pull|commit)\//);
    const made = cases.filter((c) => plans.get(c.name)!.ok).map((c) => ({ c, p: plans.get(c.name) as Extract<SnippetPlan, { ok: true }> }));
    const refused = cases.filter((c) => !plans.get(c.name)!.ok);
    const shapes = new Set(made.map(({ p }) => `${p.test.language === 'python' ? 'py' : 'js'}:${p.test.claim.shape}`));
    for (const s of ['py:repl', 'py:script', 'py:prose', 'py:template', 'js:repl', 'js:console', 'js:script', 'js:prose', 'js:template']) expect(shapes).toContain(s);
    expect(new Set(made.map(({ p }) => p.test.kind))).toEqual(new Set(['expected-value', 'wrong-value', 'exception']));
    expect(new Set(made.map(({ c }) => runnerOf(repos[c.repo].test_command)))).toEqual(new Set(['pytest', 'jest', 'vitest', 'mocha', 'node-test', 'tap', 'tape']));
    const reasons = refused.map((c) => (plans.get(c.name) as { reason: string }).reason);
    expect(reasons).toEqual(expect.arrayContaining(['the issue asks a question', 'the issue requests a feature', 'the issue shows no code']));
    expect(reasons.some((r) => /does not say which one is wrong/.test(r))).toBe(true);
    expect(made.length).toBeGreaterThanOrEqual(20);
    expect(refused.length).toBeGreaterThanOrEqual(10);
  });
});
