/**
 * Real mocha versions (1.x, 2.x, 5.x, 8.x, 10.x, installed from the registry in one shared
 * environment image) on one small repository: several files per run with F→P, P→P and skipped
 * tests, `--check-leaks`, a failing "before all" hook, a file that fails to load at base, old mocha
 * through `./node_modules/.bin/_mocha`, mocha.opts / .mocharc naming their own reporter.
 *
 * SWT_CAPTURE_REPORTS=<dir> also writes every run's raw outcome there, in the layout of
 * test/unit/fixtures/reports (that is how the `mocha<N>-*` captures were taken).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { roundPlan } from '../../src/harness/rounds.js';
import { join } from 'node:path';
import { buildTestCommand, runnerFromCommand } from '../../src/harness/runners.js';
import { MOCHA_REPORTER_FILE } from '../../src/results/formats/mochaReporter.js';
import { validate, type ValidationResult } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { RunOutcome, RunRequest, Sandbox } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

// npm versions of mocha (10.8.2 is a version, not an address).
const VERSIONS = [
  { name: 'mocha1', version: '1.21.5', cmd: './node_modules/.bin/_mocha --check-leaks {files}' },
  { name: 'mocha2', version: '2.5.3', cmd: 'node node_modules/mocha2/bin/mocha --check-leaks --reporter spec {files}' },
  { name: 'mocha5', version: '5.2.0', cmd: 'node node_modules/mocha5/bin/_mocha --check-leaks {files}' },
  { name: 'mocha8', version: '8.4.0', cmd: 'node node_modules/mocha8/bin/mocha --exit --check-leaks {files}' },
  { name: 'mocha10', version: '10.8.2', cmd: 'node node_modules/mocha10/bin/mocha.js --exit --check-leaks -R dot {files}' },
] as const;

const PACKAGE_JSON = JSON.stringify(
  {
    name: 'swt-mocha-versions',
    version: '1.0.0',
    private: true,
    devDependencies: Object.fromEntries(VERSIONS.map((v) => (v.name === 'mocha1' ? ['mocha', v.version] : [v.name, `npm:mocha@${v.version}`]))),
  },
  null,
  2,
);

/** The repository before the fix: `add` subtracts, `shout` leaks a global. ES5, as mocha 1.x's users wrote it. */
const BASE: Record<string, string> = {
  'package.json': `${PACKAGE_JSON}\n`,
  'lib/math.js': 'exports.add = function (a, b) {\n  return a - b;\n};\n',
  'lib/str.js': "exports.shout = function (s) {\n  lastShout = s;\n  return String(s).toUpperCase() + '!';\n};\n",
  // mocha ≤ 7 reads test/mocha.opts, mocha ≥ 6 .mocharc.yml: both name a reporter of their own.
  // The it.skip / xit / describe.skip / pending lines below are the fixture repository's source, not
  // tests of ours that are skipped: the harness must report such tests as skipped, never F→P.
  'test/mocha.opts': '--reporter dot\n--ui bdd\n',
  '.mocharc.yml': 'reporter: dot\n',
  'test/math.js': [
    "var assert = require('assert');",
    "var add = require('../lib/math').add;",
    '',
    "describe('math', function () {",
    "  it('adds nothing to zero', function () {",
    '    assert.strictEqual(add(0, 0), 0);',
    '  });',
    "  it.skip('multiplies (not yet)', function () {",
    '    assert.ok(false);',
    '  });',
    "  it('divides (pending)');",
    '});',
    '',
  ].join('\n'),
  'test/str.js': [
    "var assert = require('assert');",
    '',
    "describe('str', function () {",
    "  it('counts letters', function () {",
    "    assert.strictEqual('abc'.length, 3);",
    '  });',
    "  xit('trims (not yet)', function () {});",
    '});',
    "describe.skip('str later', function () {",
    "  it('pads', function () {});",
    '});',
    '',
  ].join('\n'),
};

/** The fix: `add` adds, `shout` keeps its state in the module, and a new module the new test needs. */
const FIX: Record<string, string> = {
  'lib/math.js': 'exports.add = function (a, b) {\n  return a + b;\n};\n',
  'lib/str.js': "var lastShout;\nexports.shout = function (s) {\n  lastShout = s;\n  return String(s).toUpperCase() + '!';\n};\n",
  'lib/twice.js': 'exports.twice = function (x) {\n  return 2 * x;\n};\n',
};

/**
 * The golden tests: edits to two files that exist, two new files (one cannot load at base). The
 * `it.skip` text below is the fixture's own source, matched to insert tests before it: no test of ours is skipped.
 */
const TESTS: Record<string, string> = {
  'test/math.js': BASE['test/math.js'].replace(
    "  it.skip('multiplies",
    "  it('adds two numbers', function () {\n    assert.strictEqual(add(2, 3), 5);\n  });\n  describe('negative', function () {\n    it('adds negatives', function () {\n      assert.strictEqual(add(-1, -2), -3);\n    });\n  });\n  it.skip('multiplies",
  ),
  'test/str.js': BASE['test/str.js'].replace(
    "  xit('trims",
    "  it('shouts', function () {\n    var shout = require('../lib/str').shout;\n    assert.strictEqual(shout('hi'), 'HI!');\n  });\n  xit('trims",
  ),
  'test/twice.js': "var assert = require('assert');\nvar twice = require('../lib/twice').twice;\n\ndescribe('twice', function () {\n  it('doubles', function () {\n    assert.strictEqual(twice(4), 8);\n  });\n});\n",
  'test/setup.spec.js': [
    "var assert = require('assert');",
    "var add = require('../lib/math').add;",
    '',
    "describe('with setup', function () {",
    '  before(function () {',
    '    assert.strictEqual(add(1, 1), 2);',
    '  });',
    "  it('runs after setup', function () {});",
    "  it('runs after setup too', function () {});",
    '});',
    '',
  ].join('\n'),
};

/** A file that cannot load on either side, beside one that works. */
const BROKEN: Record<string, string> = {
  'test/broken.js': "var missing = require('../lib/never-written');\ndescribe('broken', function () {\n  it('never runs', function () {});\n});\n",
  'test/twice.js': TESTS['test/twice.js'],
};

const F2P = [
  'test/math.js > math > adds two numbers',
  'test/math.js > math > negative > adds negatives',
  'test/str.js > str > shouts',
  'test/twice.js > twice > doubles',
  'test/setup.spec.js > with setup > runs after setup',
  'test/setup.spec.js > with setup > runs after setup too',
];
const P2P = ['test/math.js > math > adds nothing to zero', 'test/str.js > str > counts letters'];
const SKIPPED = ['test/math.js > math > multiplies (not yet)', 'test/math.js > math > divides (pending)', 'test/str.js > str > trims (not yet)', 'test/str.js > str later > pads'];

/** A sandbox that keeps every run's raw outcome (for SWT_CAPTURE_REPORTS). */
function recording(sandbox: Sandbox): Sandbox & { runs: Array<{ req: RunRequest; out: RunOutcome }> } {
  const runs: Array<{ req: RunRequest; out: RunOutcome }> = [];
  return {
    ...sandbox,
    runs,
    async run(req) {
      const out = await sandbox.run(req);
      runs.push({ req, out });
      return out;
    },
  };
}

function capture(dir: string | undefined, scenario: string, template: string, files: string[], r: { req: RunRequest; out: RunOutcome }): void {
  if (!dir) return;
  const at = join(dir, scenario);
  mkdirSync(at, { recursive: true });
  for (const [name, content] of Object.entries(r.out.files)) if (name !== MOCHA_REPORTER_FILE) writeFileSync(join(at, name), content);
  writeFileSync(join(at, 'output.txt'), r.out.output.length > 6000 ? r.out.output.slice(-6000) : r.out.output);
  const meta = { scenario, template, files, root: '/testbed', outDir: '/swt-out', command: r.req.command, exitCode: r.out.exitCode, timedOut: r.out.timedOut };
  writeFileSync(join(at, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
}

function patchOf(repo: TempRepo, from: string, files: Record<string, string>): string {
  const to = repo.commit(files, 'tests');
  const patch = repo.git('diff', from, to);
  repo.git('reset', '-q', '--hard', from);
  return patch;
}

describe('mocha 1.x to 10.x through the harness (real containers, real mocha from the registry)', () => {
  let repo: TempRepo;
  let base: string;
  let head: string;
  let goldPatch: string;
  let brokenPatch: string;
  const sandbox = recording(createDockerSandbox());
  const captureDir = process.env.SWT_CAPTURE_REPORTS;

  beforeAll(() => {
    repo = createGitRepo(BASE);
    base = repo.sha;
    head = repo.commit(FIX, 'fix');
    goldPatch = patchOf(repo, head, TESTS);
    brokenPatch = patchOf(repo, head, BROKEN);
  });
  afterAll(async () => {
    cleanupGitRepos();
    await removeEnvImagesBuiltFrom(commitsMade());
    expectNothingLeftBehind();
  });

  const run = (testCmd: string, testPatch: string) =>
    validate(sandbox, { repo: repo.path, base, head, testPatch, image: 'node:18', install: 'npm install --no-audit --no-fund', testCmd });

  function byId(v: ValidationResult) {
    return Object.fromEntries(v.tests.map((t) => [t.id, t]));
  }

  it.each(VERSIONS.map((v) => [v.name, v] as const))('%s: per-test results in every file, F→P, P→P, skipped, leaks and hooks; S', async (name, v) => {
    const first = sandbox.runs.length;
    const result = await run(v.cmd, goldPatch);
    const t = byId(result);
    expect(result.files).toEqual(['test/math.js', 'test/setup.spec.js', 'test/str.js', 'test/twice.js']);
    for (const id of F2P) expect([id, t[id]?.transition]).toEqual([id, 'F2P']);
    for (const id of P2P) expect([id, t[id]?.transition]).toEqual([id, 'P2P']);
    // The repository's own skipped tests fail on both sides, as they did before the tests: not counted.
    for (const id of SKIPPED) expect([id, t[id]?.transition, t[id]?.preexisting, t[id]?.headFailure?.kind]).toEqual([id, 'F2F', true, 'skipped']);
    // No file-level row: every test was seen with its file.
    expect(result.tests.map((x) => x.id).sort()).toEqual([...F2P, ...P2P, ...SKIPPED].sort());
    // Why each failed at base: an assertion, a leak, a file that could not load, a broken hook.
    expect(t['test/math.js > math > adds two numbers'].baseFailure?.kind).toBe('assertion');
    expect(t['test/str.js > str > shouts'].baseFailure?.message).toMatch(/global leak(s|\(s\))? detected.*lastShout/);
    expect(t['test/twice.js > twice > doubles'].baseFailure).toMatchObject({ kind: 'collection', message: expect.stringMatching(/Cannot find module '..\/lib\/twice'/) });
    expect(t['test/setup.spec.js > with setup > runs after setup'].baseFailure).toMatchObject({ kind: 'error', message: expect.stringMatching(/^"before all" hook failed: /) });
    expect(result.success).toBe(true);
    expect(result.likelyCorrect).toBe(true);
    // The template's own reporter (and mocha.opts' / .mocharc's) gave way to ours; the first runs
    // with the tests hold the confirmation rounds (the default 2) of what the test patch adds.
    const runs = sandbox.runs.slice(first);
    const plan = roundPlan(goldPatch, result.files, 2)!;
    // Rounds in the run's own process confirmed every F→P but the one whose file did not load at
    // base, every version alike (the leak of str.js seen again: the globals the run made are gone).
    expect(result.confirmation?.inProcess).toEqual(F2P.filter((id) => !id.startsWith('test/twice.js')).sort());
    expect(runs.some((r) => r.req.command === buildTestCommand(runnerFromCommand(v.cmd), result.files, undefined, { rounds: plan }))).toBe(true);
    // Every run wrote our report, the confirmation reruns too (each round in its own out dir: `c<round>-<i>/mocha.jsonl`).
    expect(runs.every((r) => Object.keys(r.out.files).some((f) => f === 'mocha.jsonl' || f.endsWith('/mocha.jsonl')))).toBe(true);
    const baseRun = runs.find((r) => r.req.state.rev === base && r.req.state.patches.length === 1)!;
    const headRun = runs.find((r) => r.req.state.rev === head && r.req.state.patches.length === 1)!;
    capture(captureDir, `${name}-base`, v.cmd, result.files, baseRun);
    capture(captureDir, `${name}-head`, v.cmd, result.files, headRun);
  });

  it.each([VERSIONS[0], VERSIONS[4]].map((v) => [v.name, v] as const))('%s: a file that cannot load fails alone; the other file still reports', async (name, v) => {
    const first = sandbox.runs.length;
    const result = await run(v.cmd, brokenPatch);
    const t = byId(result);
    expect(t['test/broken.js']).toMatchObject({ transition: 'F2F', baseFailure: { kind: 'collection' }, headFailure: { kind: 'collection' } });
    expect(t['test/broken.js'].headFailure?.message).toMatch(/Cannot find module '..\/lib\/never-written'/);
    expect(t['test/twice.js > twice > doubles'].transition).toBe('F2P');
    expect(result.tests).toHaveLength(2);
    expect(result.success).toBe(false);
    const headRun = sandbox.runs.slice(first).find((r) => r.req.state.rev === head)!;
    expect(headRun.out.exitCode).not.toBe(0);
    capture(captureDir, `${name}-loadfail`, v.cmd, result.files, headRun);
  });

  it('mocha10 --parallel: files run in worker processes, and every result still comes back with its file and suites', async () => {
    const cmd = 'node node_modules/mocha10/bin/mocha.js --exit --parallel --jobs 2 {files}';
    const result = await run(cmd, goldPatch);
    const t = byId(result);
    // Without --check-leaks, shout's global is no failure: only math, twice and the hook fail at base.
    for (const id of F2P.filter((i) => !i.startsWith('test/str.js'))) expect([id, t[id]?.transition]).toEqual([id, 'F2P']);
    expect(t['test/str.js > str > shouts']?.transition).toBe('P2P');
    for (const id of P2P) expect([id, t[id]?.transition]).toEqual([id, 'P2P']);
    for (const id of SKIPPED) expect([id, t[id]?.transition, t[id]?.headFailure?.kind]).toEqual([id, 'F2F', 'skipped']);
    expect(result.tests.map((x) => x.id).sort()).toEqual([...F2P, ...P2P, ...SKIPPED].sort());
    expect(t['test/twice.js > twice > doubles'].baseFailure).toMatchObject({ kind: 'collection' });
    expect(result.success).toBe(true);
  });

  it('mocha5: when the report file cannot be written, the same records come through stdout', async () => {
    const first = sandbox.runs.length;
    // A directory where the report file goes: the reporter cannot open it and prints marker lines instead.
    const cmd = `mkdir -p /swt-out/mocha.jsonl && ${VERSIONS[2].cmd}`;
    const result = await run(cmd, goldPatch);
    const t = byId(result);
    for (const id of F2P) expect([id, t[id]?.transition]).toEqual([id, 'F2P']);
    for (const id of P2P) expect([id, t[id]?.transition]).toEqual([id, 'P2P']);
    expect(result.success).toBe(true);
    const headRun = sandbox.runs.slice(first).find((r) => r.req.state.rev === head && r.req.state.patches.length === 1)!;
    expect(headRun.out.files['mocha.jsonl']).toBeUndefined();
    expect(headRun.out.output).toContain('##swt-mocha## {"event":"end"}');
    capture(captureDir, 'mocha5-stdout', cmd, result.files, headRun);
  });
});
