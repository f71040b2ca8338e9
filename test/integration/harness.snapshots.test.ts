/**
 * A test patch that changes only a snapshot (tap, jest) or a fixture a test reads: the harness
 * runs the test file that owns it, never the snapshot itself, and the F→P is seen. Real
 * containers, tap and jest from the registry.
 */
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { RunRequest, Sandbox } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

const INSTALL = 'npm install --no-audit --no-fund';
const FMT_BASE = "exports.fmt = function (x) {\n  return '[' + x + ']';\n};\n";
const FMT_FIX = "exports.fmt = function (x) {\n  return '<' + x + '>';\n};\n";

/** What tap 16 writes for `t.matchSnapshot(fmt('a'), 'a')` in the subtest `formats`. */
const tapSnapshot = (value: string) =>
  [
    '/* IMPORTANT',
    ' * This snapshot file is auto-generated, but designed for humans.',
    ' * It should be checked into source control and tracked carefully.',
    ' * Re-generate by setting TAP_SNAPSHOT=1 and running tests.',
    ' * Make sure to inspect the output below.  Do not ignore changes!',
    ' */',
    "'use strict'",
    'exports[`test/fmt.js TAP formats > a 1`] = `',
    value,
    '`',
    '',
  ].join('\n');

const TAP_REPO: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'swt-tap-snapshots', version: '1.0.0', private: true, devDependencies: { tap: '16.3.10' } }, null, 2),
  'lib/fmt.js': FMT_BASE,
  'test/fmt.js': [
    "const t = require('tap')",
    "const { fmt } = require('../lib/fmt')",
    '',
    "t.test('formats', async (t) => {",
    "  t.matchSnapshot(fmt('a'), 'a')",
    '})',
    "t.test('plain', async (t) => {",
    "  t.equal(fmt('').length, 2)",
    '})',
    '',
  ].join('\n'),
  'tap-snapshots/test/fmt.js.test.cjs': tapSnapshot('[a]'),
  'test/render.js': [
    "const t = require('tap')",
    "const fs = require('fs')",
    "const path = require('path')",
    "const { fmt } = require('../lib/fmt')",
    '',
    "t.test('renders as expected', async (t) => {",
    "  const expected = fs.readFileSync(path.join(__dirname, 'fixtures', 'expected.txt'), 'utf8').trim()",
    "  t.equal(fmt('b'), expected)",
    '})',
    '',
  ].join('\n'),
  'test/fixtures/expected.txt': '[b]\n',
  'test/other.js': "const t = require('tap')\nt.test('unrelated', async (t) => { t.ok(true) })\n",
};

const JEST_REPO: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'swt-jest-snapshots', version: '1.0.0', private: true, devDependencies: { jest: '29.7.0' } }, null, 2),
  'lib/fmt.js': FMT_BASE,
  'test/fmt.test.js': [
    "const { fmt } = require('../lib/fmt');",
    '',
    "describe('fmt', () => {",
    "  it('formats', () => {",
    "    expect(fmt('a')).toMatchSnapshot();",
    '  });',
    "  it('keeps the length', () => {",
    "    expect(fmt('')).toHaveLength(2);",
    '  });',
    '});',
    '',
  ].join('\n'),
  'test/__snapshots__/fmt.test.js.snap': '// Jest Snapshot v1, https://goo.gl/fbAQLP\n\nexports[`fmt formats 1`] = `"[a]"`;\n',
};

function recording(sandbox: Sandbox): Sandbox & { requests: RunRequest[] } {
  const requests: RunRequest[] = [];
  return {
    ...sandbox,
    requests,
    run(req) {
      requests.push(req);
      return sandbox.run(req);
    },
  };
}

/** A test patch made of `files` changed on top of `at`; the repository stays at `at`. */
function patchOf(repo: TempRepo, at: string, files: Record<string, string>): string {
  const to = repo.commit(files, 'tests');
  const patch = repo.git('diff', at, to);
  repo.git('reset', '-q', '--hard', at);
  return patch;
}

describe('snapshots and fixtures run the test files that own them (real containers)', () => {
  const sandbox = recording(createDockerSandbox());
  let tap: { repo: TempRepo; base: string; head: string };
  let jest: { repo: TempRepo; base: string; head: string };

  beforeAll(async () => {
    const make = (files: Record<string, string>) => {
      const repo = createGitRepo(files);
      const base = repo.sha;
      return { repo, base, head: repo.commit({ 'lib/fmt.js': FMT_FIX }, 'fix') };
    };
    tap = make(TAP_REPO);
    jest = make(JEST_REPO);
    // Both environments build at once; the validations below find them cached.
    await Promise.all(
      [tap, jest].map((p) => sandbox.ensureEnvironment({ repo: p.repo.path, rev: p.base, baseImage: 'node:18', install: INSTALL })),
    );
  });
  afterAll(async () => {
    cleanupGitRepos();
    await removeEnvImagesBuiltFrom(commitsMade());
    expectNothingLeftBehind();
  });

  const check = (p: { repo: TempRepo; base: string; head: string }, testPatch: string, testCmd: string) =>
    validate(sandbox, { repo: p.repo.path, base: p.base, head: p.head, testPatch, image: 'node:18', install: INSTALL, testCmd });

  it("tap: a patch that only updates tap-snapshots/test/fmt.js.test.cjs runs test/fmt.js, and its F→P is seen", async () => {
    const first = sandbox.requests.length;
    const testPatch = patchOf(tap.repo, tap.head, { 'tap-snapshots/test/fmt.js.test.cjs': tapSnapshot('<a>') });
    expect(testPatch).not.toMatch(/^diff --git a\/test\//m);
    const v = await check(tap, testPatch, 'npx tap --no-coverage {files}');
    expect(v.files).toEqual(['test/fmt.js']);
    const t = Object.fromEntries(v.tests.map((x) => [x.id, x]));
    expect(t['test/fmt.js > formats']).toMatchObject({ transition: 'F2P', baseFailure: { kind: 'assertion' } });
    expect(t['test/fmt.js > plain'].transition).toBe('P2P');
    expect(v.success).toBe(true);
    expect(v.likelyCorrect).toBe(true);
    // The snapshot was never handed to the runner.
    expect(sandbox.requests.slice(first).every((r) => !r.command.includes('tap-snapshots'))).toBe(true);
  });

  it('tap: a patch that only updates a fixture runs the test that reads it', async () => {
    const testPatch = patchOf(tap.repo, tap.head, { 'test/fixtures/expected.txt': '<b>\n' });
    const v = await check(tap, testPatch, 'npx tap --no-coverage {files}');
    expect(v.files).toEqual(['test/render.js']);
    expect(v.tests.map((x) => [x.id, x.transition])).toEqual([['test/render.js > renders as expected', 'F2P']]);
    expect(v.success).toBe(true);
  });

  it('jest: a patch that only updates __snapshots__/fmt.test.js.snap runs test/fmt.test.js, and its F→P is seen', async () => {
    const first = sandbox.requests.length;
    const testPatch = patchOf(jest.repo, jest.head, { 'test/__snapshots__/fmt.test.js.snap': '// Jest Snapshot v1, https://goo.gl/fbAQLP\n\nexports[`fmt formats 1`] = `"<a>"`;\n' });
    const v = await check(jest, testPatch, 'npx jest {files}');
    expect(v.files).toEqual(['test/fmt.test.js']);
    const t = Object.fromEntries(v.tests.map((x) => [x.id, x]));
    expect(t['test/fmt.test.js > fmt > formats']).toMatchObject({ transition: 'F2P', baseFailure: { kind: 'assertion' } });
    expect(t['test/fmt.test.js > fmt > keeps the length'].transition).toBe('P2P');
    expect(v.success).toBe(true);
    expect(v.likelyCorrect).toBe(true);
    expect(sandbox.requests.slice(first).every((r) => !r.command.includes('.snap'))).toBe(true);
  });
});
