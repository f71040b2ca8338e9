import { runTests } from '../../src/harness/runTests.js';
import { renderNotesText } from '../../src/pipeline/notes.js';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';

// A PR that bumps a dependency its fix needs: semver 5.4.1 has no coerce(), 5.5.0 does. Both
// versions come from registry.npmjs.org through the egress proxy. With head's own environment the
// new test goes F→P; run in base's environment, head's code would fail it (a wrong F→F).

const pkg = (semver: string) => JSON.stringify({ name: 'versions', version: '1.0.0', private: true, dependencies: { semver } }, null, 2) + '\n';
const BASE_LIB = "const semver = require('semver');\nexports.toVersion = (s) => {\n  const v = semver.valid(s);\n  if (!v) throw new Error('not a version: ' + s);\n  return v;\n};\n";
const FIXED_LIB = "const semver = require('semver');\nexports.toVersion = (s) => semver.coerce(s).version;\n";
const TEST = [
  "const test = require('node:test');",
  "const assert = require('node:assert');",
  "const { toVersion } = require('../lib.js');",
  "test('coerces a loose version', () => assert.strictEqual(toVersion('v1.2'), '1.2.0'));",
  "test('keeps a full version', () => assert.strictEqual(toVersion('1.2.3'), '1.2.3'));",
];
const TEST_PATCH = ['diff --git a/test/version.test.js b/test/version.test.js', 'new file mode 100644', '--- /dev/null', '+++ b/test/version.test.js', `@@ -0,0 +1,${TEST.length} @@`, ...TEST.map((l) => `+${l}`), ''].join('\n');

function fileDiff(path: string, before: string, after: string): string {
  const a = before.replace(/\n$/, '').split('\n');
  const b = after.replace(/\n$/, '').split('\n');
  return [`diff --git a/${path} b/${path}`, `--- a/${path}`, `+++ b/${path}`, `@@ -1,${a.length} +1,${b.length} @@`, ...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`), ''].join('\n');
}

let sandbox: Sandbox;
let repo: TempRepo;
let base: string;
let head: string;
const common = { image: 'node:22', install: 'npm install --no-audit --no-fund', testCmd: 'node --test {files}' };

beforeAll(() => {
  sandbox = createDockerSandbox();
  repo = createGitRepo({ 'package.json': pkg('5.4.1'), 'lib.js': BASE_LIB });
  base = repo.sha;
  head = repo.commit({ 'package.json': pkg('5.5.0'), 'lib.js': FIXED_LIB }, 'coerce loose versions (needs semver 5.5)');
});

afterAll(cleanUpEcosystemRuns);

describe("head's own dependencies (real containers, real packages from the registry)", () => {
  it('a PR head that bumps a dependency gets its own environment: F→P there, where base’s environment gives a wrong answer', async () => {
    const v = await validate(sandbox, { repo: repo.path, base, head, testPatch: TEST_PATCH, ...common });
    const byId = Object.fromEntries(v.tests.map((t) => [t.id.replace(/^.*> /, ''), t.transition]));
    expect(byId).toEqual({ 'coerces a loose version': 'F2P', 'keeps a full version': 'P2P' });
    expect(v.success).toBe(true);
    expect(v.likelyCorrect).toBe(true);
    expect(v.environment.head).toMatchObject({ own: true, manifests: ['package.json'] });
    expect(v.environment.head.image).not.toBe(v.environment.base.image);
    // Backward compatible: the top-level fields are base's.
    expect(v.environment.image).toBe(v.environment.base.image);
    expect(renderNotesText(v)).toContain(`head ${v.environment.head.image}`);
    expect(renderNotesText(v)).toContain('its own because package.json changed');

    // The same head code in base's environment (semver 5.4.1): the wrong answer the old harness gave.
    const baseEnv = await sandbox.ensureEnvironment({ repo: repo.path, rev: base, baseImage: common.image, install: common.install });
    expect(baseEnv.image).toBe(v.environment.base.image);
    const wrong = await runTests(sandbox, {
      env: baseEnv,
      repo: repo.path,
      state: { rev: head, patches: [TEST_PATCH] },
      runner: { kind: 'node-test', template: common.testCmd },
      files: ['test/version.test.js'],
    });
    expect(wrong.tests.map((t) => t.outcome)).toEqual(['failed', 'failed']);
    expect(wrong.tests[0]!.message).toMatch(/coerce is not a function/);

    // A second validation finds both environments in the cache.
    const again = await validate(sandbox, { repo: repo.path, base, head, testPatch: TEST_PATCH, ...common });
    expect([again.environment.base.cached, again.environment.head.cached]).toEqual([true, true]);
    expect(again.environment.head.image).toBe(v.environment.head.image);

    // Both versions now sit in the repository's package cache: an install with no registry at all
    // (npm --offline) builds from it, and fails for a version never fetched.
    const offline = (semver: string) =>
      sandbox.ensureEnvironment({ repo: repo.path, rev: repo.commit({ 'package.json': pkg(semver) }), baseImage: common.image, install: 'npm install --offline --no-audit --no-fund' });
    await expect(offline('5.4.1')).resolves.toMatchObject({ cached: false });
    await expect(offline('5.5.0')).resolves.toMatchObject({ cached: false });
    await expect(offline('5.6.0')).rejects.toThrow(/ENOTCACHED|offline/);
  });

  it('base + a fix patch that bumps the dependency: the patched state gets its own environment, which still holds base’s tracked files', async () => {
    // A repository of its own: in the first one, the head commit's image (same manifests, same key) would serve.
    const own = createGitRepo({ 'package.json': pkg('5.4.1'), 'lib.js': BASE_LIB });
    const [repo, base] = [own, own.sha];
    const fixPatch = fileDiff('package.json', pkg('5.4.1'), pkg('5.5.0')) + fileDiff('lib.js', BASE_LIB, FIXED_LIB);
    const v = await validate(sandbox, { repo: repo.path, base, fixPatch, testPatch: TEST_PATCH, ...common });
    expect(v.tests.map((t) => t.transition).sort()).toEqual(['F2P', 'P2P']);
    expect(v.environment.head.own).toBe(true);
    // The image's /testbed holds base's lib.js and package.json (runs overlay the fix), with semver 5.5.0 installed.
    const headEnv = await sandbox.ensureEnvironment({ repo: repo.path, rev: base, patches: [fixPatch], baseImage: common.image, install: common.install });
    expect(headEnv).toMatchObject({ cached: true, snapshotRev: base, image: v.environment.head.image });
    const look = await sandbox.run({
      env: headEnv,
      repo: repo.path,
      state: { rev: base, patches: [] },
      command: "node -e \"console.log(require('semver/package.json').version)\"; grep -c coerce lib.js; grep -o '\"semver\": \"[0-9.]*\"' package.json; ls -a /home/swt | grep -c swt-restore",
    });
    expect(look.output.trim().split('\n')).toEqual(['5.5.0', '0', '"semver": "5.4.1"', '0']);
  });

  it('a head that leaves the manifests alone shares base’s environment', async () => {
    const other = createGitRepo({ 'package.json': pkg('5.4.1'), 'lib.js': BASE_LIB });
    const otherBase = other.sha;
    const otherHead = other.commit({ 'lib.js': "exports.toVersion = (s) => { const m = /^v?(\\d+)\\.(\\d+)(?:\\.(\\d+))?$/.exec(s); return `${m[1]}.${m[2]}.${m[3] ?? 0}`; };\n" });
    const v = await validate(sandbox, { repo: other.path, base: otherBase, head: otherHead, testPatch: TEST_PATCH, ...common });
    expect(v.tests.map((t) => t.transition).sort()).toEqual(['F2P', 'P2P']);
    expect(v.environment.head).toMatchObject({ own: false, manifests: [], image: v.environment.base.image });
    expect(renderNotesText(v)).toContain('for base and head');
  });
});
