import { execFileSync } from 'node:child_process';
import { describeApplyFailure, findHunk, listHunks, patchLabel } from '../../src/repo/applyErrors.js';
import { bundleFromPem, caEnv, caFiles, caFingerprint, caPathsFromEnv, parsePemCertificates } from '../../src/sandbox/images/caCertificates.js';
import { demuxBuffer, isBinary, TailBuffer } from '../../src/sandbox/containers/containerIo.js';
import { environmentFamily, environmentKey, envImageTag } from '../../src/sandbox/images/envKey.js';
import { changedManifests, isDependencyManifest } from '../../src/ecosystems/index.js';
import {
  baseIdentity,
  baseImageName,
  DEBIAN_PYTHONS,
  finishDockerfile,
  finishScript,
  npmMajorFor,
  offlinePython,
  parseBaseRef,
} from '../../src/sandbox/images/imageRecipes.js';
import { containerLabels, cpusetFromEnv, hostConfigFor, resolveLimits, tmpSizeBytes } from '../../src/sandbox/containers/limits.js';
import { deletionScript, gitModeToTar, parseDiffTreeRaw, parentDirs, planOverlay } from '../../src/repo/overlay.js';
import { shellQuote } from '../../src/util/shell.js';
import { confineRepoPath as safeRelativePath } from '../../src/util/repoPath.js';
import { canonicalDiff, fileDiff } from '../../src/patch/canonical.js';
import { isExcludedFromDiff } from '../../src/sandbox/containers/session.js';
import { DEFAULT_LIMITS } from '../../src/sandbox/types.js';
import { isSwtError } from '../../src/util/errors.js';

const CERT = `-----BEGIN CERTIFICATE-----
MIIBizCCATGgAwIBAgIUSLM/FtO0wdWFEL/vXqwk+J21o54wCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPc3d0LWJvdCB0ZXN0IENBMCAXDTI2MTEyMTA1MzA1OFoYDzIx
MjYxMDI4MDUzMDU4WjAaMRgwFgYDVQQDDA9zd3QtYm90IHRlc3QgQ0EwWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAAROrn7Jwd6mPCaObHuWhppzuDpPWriUqYJ7r70n
y9adlfRPkrUSptW/XuWyzmakh3lSYqOjWiLPMfgKQylK/2Z0o1MwUTAdBgNVHQ4E
FgQUolAfizGkUs96Oz5rTH9TVODHuTwwHwYDVR0jBBgwFoAUolAfizGkUs96Oz5r
TH9TVODHuTwwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEAoy44
4rM3oxs5f9pAVM6r620qyDWOmwnIhOaFPruYB7wCID1w2d3pW8ff0ZQtbkjN/zyq
mTNMUvwYbZlzkvrF60Va
-----END CERTIFICATE-----`;

const PATCH = [
  'diff --git a/tests/test_x.py b/tests/test_x.py',
  '--- a/tests/test_x.py',
  '+++ b/tests/test_x.py',
  '@@ -2,3 +2,4 @@ def f():',
  ' a',
  ' b',
  '+c',
  ' d',
  '@@ -40,6 +41,7 @@',
  ' l40',
  ' l41',
  '-l42',
  '+m42',
  '+m43',
  ' l43',
  ' l44',
  ' l45',
  'diff --git a/new.py b/new.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/new.py',
  '@@ -0,0 +1,2 @@',
  '+x = 1',
  '+y = 2',
  '',
].join('\n');

describe('patch failure naming', () => {
  it('lists files and hunks with their headers', () => {
    expect(listHunks(PATCH)).toEqual([
      { file: 'tests/test_x.py', hunks: [{ oldStart: 2, header: '@@ -2,3 +2,4 @@' }, { oldStart: 40, header: '@@ -40,6 +41,7 @@' }] },
      { file: 'new.py', hunks: [{ oldStart: 0, header: '@@ -0,0 +1,2 @@' }] },
    ]);
  });
  it('maps git\'s "patch failed: path:line" to the hunk', () => {
    const stderr = 'error: patch failed: tests/test_x.py:40\nerror: tests/test_x.py: patch does not apply\n';
    expect(describeApplyFailure('test patch', PATCH, stderr)).toEqual({
      code: 'PATCH_DOES_NOT_APPLY',
      message: 'test patch does not apply: tests/test_x.py, hunk 2 (@@ -40,6 +41,7 @@)',
    });
    expect(findHunk(PATCH, 'tests/test_x.py', 2)).toEqual({ file: 'tests/test_x.py', index: 1, header: '@@ -2,3 +2,4 @@' });
    // A line git computed differently falls back to the nearest hunk before it.
    expect(findHunk(PATCH, 'tests/test_x.py', 44)?.index).toBe(2);
  });
  it('still names hunks when parsePatch rejects the patch (wrong counts)', () => {
    const bad = 'diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,9 @@\n a\n+b\n@@ -10,2 +17,2 @@\n x\n-y\n+z\n';
    expect(describeApplyFailure('patch', bad, 'error: patch failed: f.py:10\n').message).toBe('patch does not apply: f.py, hunk 2 (@@ -10,2 +17,2 @@)');
  });
  it('classifies missing files, existing files and malformed input', () => {
    expect(describeApplyFailure('code patch', PATCH, 'error: new.py: already exists in index\n')).toEqual({
      code: 'PATCH_DOES_NOT_APPLY',
      message: 'code patch does not apply: new.py already exists',
    });
    expect(describeApplyFailure('p', PATCH, 'error: src/x.py: does not exist in index\n').message).toBe('p does not apply: src/x.py, the file does not exist');
    expect(describeApplyFailure('p', 'junk', 'error: No valid patches in input (allow with "--allow-empty")\n').code).toBe('PATCH_MALFORMED');
    expect(describeApplyFailure('p', 'junk', 'error: corrupt patch at line 7\n').code).toBe('PATCH_MALFORMED');
    expect(patchLabel(1, 2)).toBe('patch 2 of 2');
    expect(patchLabel(0, 1)).toBe('patch');
    expect(patchLabel(1, 2, ['code patch', 'test patch'])).toBe('test patch');
  });
});

describe('overlay planning', () => {
  const z = '0'.repeat(40);
  const raw = [
    ':100644 100644 ' + 'a'.repeat(40) + ' ' + 'b'.repeat(40) + ' M', 'src/app.py',
    ':000000 100755 ' + z + ' ' + 'c'.repeat(40) + ' A', 'new/deep/dir/run.sh',
    ':100644 000000 ' + 'd'.repeat(40) + ' ' + z + ' D', "old/it's gone.txt",
    ':000000 160000 ' + z + ' ' + 'e'.repeat(40) + ' A', 'vendor/sub',
    ':100644 120000 ' + 'f'.repeat(40) + ' ' + '1'.repeat(40) + ' T', 'link',
    '',
  ].join('\0');
  it('parses diff-tree output and plans writes, deletions and parent directories', () => {
    const changes = parseDiffTreeRaw(raw);
    expect(changes.map((c) => [c.status, c.path, c.mode])).toEqual([
      ['M', 'src/app.py', '100644'],
      ['A', 'new/deep/dir/run.sh', '100755'],
      ['D', "old/it's gone.txt", '000000'],
      ['A', 'vendor/sub', '160000'],
      ['T', 'link', '120000'],
    ]);
    const plan = planOverlay(changes);
    expect(plan.write.map((w) => w.path)).toEqual(['link', 'new/deep/dir/run.sh', 'src/app.py']);
    expect(plan.delete).toEqual(["old/it's gone.txt"]);
    expect(plan.skipped).toEqual(['vendor/sub']);
    expect(plan.dirs).toEqual(['new', 'src', 'new/deep', 'new/deep/dir']);
    expect(parentDirs('a/b/c.txt')).toEqual(['a', 'a/b']);
    expect(gitModeToTar('100755')).toEqual({ type: 'file', mode: 0o755 });
    expect(gitModeToTar('120000').type).toBe('symlink');
    expect(parseDiffTreeRaw('')).toEqual([]);
  });
  it('quotes deletions safely for sh and batches them', () => {
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    const script = deletionScript(["old/it's gone.txt", '$(touch /tmp/pwned)', 'a b'], '/testbed', 2);
    expect(script.split('\n')).toHaveLength(2);
    // sh parses it back to exactly the paths (echo instead of rm).
    const echoed = execFileSync('sh', ['-c', script.replace(/rm -f --/g, 'printf "%s\\n"').replace(/ 2>\/dev\/null \|\| true/g, '')], { encoding: 'utf8' });
    expect(echoed.split('\n').filter(Boolean)).toEqual(["/testbed/old/it's gone.txt", '/testbed/$(touch /tmp/pwned)', '/testbed/a b']);
  });
});

describe('environment cache key', () => {
  const files = [
    { path: 'package.json', blob: '1'.repeat(40) },
    { path: 'src/index.js', blob: '2'.repeat(40) },
    { path: 'requirements-dev.txt', blob: '3'.repeat(40) },
  ];
  it('recognises dependency manifests and lockfiles', () => {
    for (const p of ['package.json', 'packages/a/package.json', 'package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'requirements.txt', 'requirements-dev.txt', 'setup.py', 'setup.cfg', 'pyproject.toml', 'Pipfile.lock', 'poetry.lock', 'go.mod', 'go.sum', 'tools/go.mod', 'Cargo.toml', 'crates/a/Cargo.toml', 'Cargo.lock', 'pom.xml', 'lib/build.gradle.kts', 'Gemfile.lock', 'paint.gemspec', 'composer.json']) {
      expect(isDependencyManifest(p)).toBe(true);
    }
    for (const p of ['src/index.js', 'README.md', 'node_modules/x/package.json', 'requirements.md', 'tests/test_setup.py']) {
      expect(isDependencyManifest(p)).toBe(false);
    }
  });
  const who = { scope: 'octo/app', trusted: true };
  it('depends on the repository, the install\'s trust, the base image, the install command and manifest contents only', () => {
    const k = environmentKey({ ...who, baseImageId: 'sha256:aa', install: 'npm ci', files });
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(environmentKey({ ...who, baseImageId: 'sha256:aa', install: 'npm ci', files: [...files].reverse() })).toBe(k);
    expect(environmentKey({ ...who, baseImageId: 'sha256:aa', install: 'npm ci', files: [files[0]!, files[2]!, { path: 'src/index.js', blob: '9'.repeat(40) }] })).toBe(k);
    expect(environmentKey({ ...who, baseImageId: 'sha256:bb', install: 'npm ci', files })).not.toBe(k);
    expect(environmentKey({ ...who, baseImageId: 'sha256:aa', install: 'npm install', files })).not.toBe(k);
    expect(environmentKey({ ...who, baseImageId: 'sha256:aa', install: 'npm ci', files: [{ path: 'package.json', blob: '4'.repeat(40) }, files[1]!, files[2]!] })).not.toBe(k);
    expect(environmentKey({ ...who, scope: 'octo/other', baseImageId: 'sha256:aa', install: 'npm ci', files })).not.toBe(k);
    expect(environmentKey({ ...who, trusted: false, baseImageId: 'sha256:aa', install: 'npm ci', files })).not.toBe(k);
    expect(envImageTag(k, 'abcdef0123456789')).toBe(`swt-env:${k.slice(0, 16)}-abcdef01`);
    expect(envImageTag(k, 'abcdef0123456789', 'test-7')).toBe(`swt-env-test-7:${k.slice(0, 16)}-abcdef01`);
  });
  it('puts images that differ only in their manifests in one family (the nearest layer\'s)', () => {
    const f = environmentFamily({ scope: 'octo/app', baseImageId: 'sha256:aa', install: 'npm ci' });
    expect(f).toMatch(/^[0-9a-f]{64}$/);
    expect(environmentFamily({ scope: 'octo/app', baseImageId: 'sha256:aa', install: ' npm ci ' })).toBe(f);
    expect(environmentFamily({ scope: 'octo/other', baseImageId: 'sha256:aa', install: 'npm ci' })).not.toBe(f);
    expect(environmentFamily({ scope: 'octo/app', baseImageId: 'sha256:bb', install: 'npm ci' })).not.toBe(f);
    expect(environmentFamily({ scope: 'octo/app', baseImageId: 'sha256:aa', install: 'npm install' })).not.toBe(f);
    expect(environmentFamily({ scope: 'octo/app', baseImageId: 'sha256:aa', install: 'npm ci', warm: { after: 'x' } })).not.toBe(f);
    expect(environmentFamily({ scope: 'octo/app', baseImageId: 'sha256:aa', install: 'npm ci', warm: { before: 'x' } })).not.toBe(environmentFamily({ scope: 'octo/app', baseImageId: 'sha256:aa', install: 'npm ci', warm: { after: 'x' } }));
    // No step at all keys as before.
    expect(environmentFamily({ scope: 'octo/app', baseImageId: 'sha256:aa', install: 'npm ci', warm: {} })).toBe(f);
    expect(f).not.toBe(environmentKey({ ...who, baseImageId: 'sha256:aa', install: 'npm ci', files: [] }));
  });
  it('ignores the manifests when nothing is installed', () => {
    const changed = [{ path: 'package.json', blob: '4'.repeat(40) }, files[1]!, files[2]!];
    expect(environmentKey({ ...who, baseImageId: 'sha256:aa', install: '  ', files: changed })).toBe(environmentKey({ ...who, baseImageId: 'sha256:aa', install: '', files }));
  });
  it('names the changed manifests that give a side its own environment', () => {
    expect(changedManifests(['src/a.js', 'package.json', 'requirements-dev.txt', 'node_modules/x/package.json', 'docs/setup.cfg.md'])).toEqual([
      'package.json',
      'requirements-dev.txt',
    ]);
    expect(changedManifests(['src/a.js', 'test/a.test.js'])).toEqual([]);
  });
});

describe('limits → HostConfig', () => {
  it('maps limits to a locked-down HostConfig with no swap', () => {
    const hc = hostConfigFor({ limits: { ...DEFAULT_LIMITS, memoryBytes: 512 * 1024 ** 2, pids: 100, cpus: 1.5, timeoutMs: 1000 }, network: 'none', engineCpus: 8 });
    expect(hc).toMatchObject({
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: 100,
      Memory: 512 * 1024 ** 2,
      MemorySwap: 512 * 1024 ** 2,
      NanoCpus: 1_500_000_000,
      Init: true,
      Ulimits: [
        { Name: 'nofile', Soft: 8192, Hard: 8192 },
        { Name: 'fsize', Soft: DEFAULT_LIMITS.diskBytes, Hard: DEFAULT_LIMITS.diskBytes },
      ],
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${256 * 1024 ** 2},nr_inodes=${DEFAULT_LIMITS.diskBytes / (16 * 1024)},mode=1777` },
    });
    expect(hc.StorageOpt).toBeUndefined();
    expect(hc.Mounts).toBeUndefined();
    const withDisk = hostConfigFor({ limits: { ...DEFAULT_LIMITS, diskBytes: 1024 ** 3 }, network: 'swt-install-1', storageOpt: true, mounts: [{ Type: 'volume', Source: 'v', Target: '/swt-cache' }] });
    expect(withDisk.StorageOpt).toEqual({ size: String(1024 ** 3) });
    expect(withDisk.Mounts).toEqual([{ Type: 'volume', Source: 'v', Target: '/swt-cache' }]);
    expect(tmpSizeBytes({ ...DEFAULT_LIMITS, memoryBytes: 8 * 1024 ** 3, diskBytes: 1024 ** 3 })).toBe(1024 ** 3);
    expect(hostConfigFor({ limits: { ...DEFAULT_LIMITS, cpus: 4 }, network: 'bridge', engineCpus: 2 }).NanoCpus).toBe(2_000_000_000);
    expect(hostConfigFor({ limits: DEFAULT_LIMITS, network: 'bridge' }).NetworkMode).toBe('bridge');
    expect(hostConfigFor({ limits: DEFAULT_LIMITS, network: 'none' }).CpusetCpus).toBeUndefined();
    expect(hostConfigFor({ limits: DEFAULT_LIMITS, network: 'none', cpuset: '1-3' }).CpusetCpus).toBe('1-3');
  });
  it('reads SWT_CPUSET_CPUS as a CPU list, and refuses anything else', () => {
    expect(cpusetFromEnv({})).toBeUndefined();
    expect(cpusetFromEnv({ SWT_CPUSET_CPUS: ' 1-3 ' })).toBe('1-3');
    expect(cpusetFromEnv({ SWT_CPUSET_CPUS: '0,2,4-7' })).toBe('0,2,4-7');
    for (const bad of ['all', '1;rm -rf /', '-1', '1,']) expect(() => cpusetFromEnv({ SWT_CPUSET_CPUS: bad })).toThrow(/SWT_CPUSET_CPUS must list CPUs like 1-3 or 0,2/);
  });
  it('overrides defaults per run and rejects nonsense', () => {
    expect(resolveLimits(DEFAULT_LIMITS, { timeoutMs: 5000 })).toEqual({ ...DEFAULT_LIMITS, timeoutMs: 5000 });
    expect(resolveLimits(DEFAULT_LIMITS, { pids: undefined })).toEqual(DEFAULT_LIMITS);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      let err: unknown;
      try {
        resolveLimits(DEFAULT_LIMITS, { memoryBytes: bad });
      } catch (e) {
        err = e;
      }
      expect(isSwtError(err, 'BAD_CONFIG')).toBe(true);
    }
    expect(containerLabels('run', 42, 'h')).toEqual({ 'swt-bot': '1', 'swt-bot.pid': '42', 'swt-bot.host': 'h', 'swt-bot.role': 'run' });
  });
});

describe('base image recipes', () => {
  it('maps conventional references to recipes', () => {
    expect(parseBaseRef('node:18').recipe).toEqual({ kind: 'node', version: '18' });
    expect(parseBaseRef('node:20.11-bookworm').recipe).toEqual({ kind: 'node', version: '20.11' });
    expect(parseBaseRef('python:3.11').recipe).toEqual({ kind: 'python', version: '3.11' });
    expect(parseBaseRef('docker.io/library/python:3.12-slim').recipe).toEqual({ kind: 'python', version: '3.12' });
    expect(parseBaseRef('debian:bookworm').recipe).toEqual({ kind: 'debian', suite: 'bookworm' });
    expect(parseBaseRef('debian:12').recipe).toEqual({ kind: 'debian', suite: 'bookworm' });
    expect(parseBaseRef('elixir:1.16').recipe).toEqual({ kind: 'other' });
    expect(parseBaseRef('node:lts').recipe).toEqual({ kind: 'other' });
  });
  it('serves a Python offline from the Debian suite that ships it, else the nearest: 3.9 (bullseye) up to 3.9, 3.11 (bookworm) above', () => {
    expect(DEBIAN_PYTHONS).toEqual({ '3.9': 'bullseye', '3.11': 'bookworm' });
    expect(['3.6', '3.7', '3.8', '3.9', '3.9.7'].map(offlinePython)).toEqual(['3.9', '3.9', '3.9', '3.9', '3.9']);
    expect(['3', '3.10', '3.11', '3.11.4', '3.12', '3.13', '2.7'].map(offlinePython)).toEqual(['3.11', '3.11', '3.11', '3.11', '3.11', '3.11', '3.11']);
  });
  it('names images by reference and by (recipe, CA bundle) identity', () => {
    const ca = bundleFromPem([{ source: 'x.pem', text: CERT }]);
    const withCa = baseImageName(parseBaseRef('node:18'), ca);
    expect(withCa).toMatch(/^swt-base\/node:18-[0-9a-f]{8}$/);
    expect(baseImageName(parseBaseRef('node:18'), undefined)).not.toBe(withCa);
    expect(baseIdentity(ca, 'node')).toBe(withCa.slice(-8));
    // The Node recipe's own revision (native build tools) renames only its images.
    expect(baseIdentity(ca, 'node')).not.toBe(baseIdentity(ca));
    expect(baseImageName(parseBaseRef('python:3.11'), ca)).toBe(`swt-base/python:3.11-${baseIdentity(ca)}`);
  });
  it('picks the npm major that goes with a Node major', () => {
    expect([14, 16, 18, 20, 22, 23, 24].map((v) => npmMajorFor(String(v)))).toEqual([8, 9, 10, 10, 10, 11, 11]);
    expect(npmMajorFor('18.19.1')).toBe(10);
  });
  it('writes a Dockerfile with the CA variables, the swt user and /testbed, and a finish script sh can parse', () => {
    const df = finishDockerfile({ from: 'swt-base/debian:bookworm', steps: ['RUN true'], withCa: true });
    expect(df.split('\n')[0]).toBe('FROM swt-base/debian:bookworm');
    for (const [k, v] of Object.entries(caEnv())) expect(df).toContain(`${k}=${v}`);
    expect(df).toContain('USER 1000:1000');
    expect(df).toContain('WORKDIR /testbed');
    expect(finishDockerfile({ from: 'x', steps: [], withCa: false })).not.toContain('NODE_EXTRA_CA_CERTS');
    execFileSync('sh', ['-n', '-c', finishScript(['swt-extra-001.crt'])]);
    expect(finishScript([])).toContain('useradd -u 1000');
  });
});

describe('CA certificates', () => {
  it('parses and validates PEM bundles, deduplicating certificates', () => {
    const certs = parsePemCertificates(`junk before\r\n${CERT}\r\n`, 'a.pem');
    expect(certs).toHaveLength(1);
    const b = bundleFromPem([{ source: 'a.pem', text: CERT }, { source: 'b.pem', text: CERT + '\n' + CERT }]);
    expect(b.certs).toHaveLength(1);
    expect(b.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(caFingerprint(b)).toBe(b.sha256);
    expect(caFingerprint(undefined)).toBe('no-extra-ca');
    expect(caFiles(b)).toEqual([{ name: 'swt-extra-001.crt', content: b.certs[0] + '\n' }]);
  });
  it('explains what is wrong with a file that is not PEM', () => {
    const attempts: Array<[string, RegExp]> = [
      ['hello world', /x\.pem does not look like PEM CA certificates/],
      ['-----BEGIN CERTIFICATE-----\nAAAA\n', /without its -----END CERTIFICATE----- line/],
      ['-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n', /certificate 1 is not a valid X\.509 certificate/],
    ];
    for (const [text, re] of attempts) {
      let err: unknown;
      try {
        parsePemCertificates(text, 'x.pem');
      } catch (e) {
        err = e;
      }
      expect(isSwtError(err, 'BAD_CONFIG')).toBe(true);
      expect((err as Error).message).toMatch(re);
    }
  });
  it('reads paths from SWT_EXTRA_CA_CERTS, falling back to NODE_EXTRA_CA_CERTS', () => {
    expect(caPathsFromEnv({ SWT_EXTRA_CA_CERTS: '/a.pem:/b.pem', NODE_EXTRA_CA_CERTS: '/c.pem' })).toEqual(['/a.pem', '/b.pem']);
    expect(caPathsFromEnv({ NODE_EXTRA_CA_CERTS: '/c.pem' })).toEqual(['/c.pem']);
    expect(caPathsFromEnv({ SWT_EXTRA_CA_CERTS: ' ', NODE_EXTRA_CA_CERTS: '/c.pem' })).toEqual(['/c.pem']);
    expect(caPathsFromEnv({})).toEqual([]);
  });
});

describe('session helpers', () => {
  it('accepts relative paths and rejects absolute ones and .. escapes', () => {
    expect(safeRelativePath('src/a.py')).toBe('src/a.py');
    expect(safeRelativePath('./src//a.py')).toBe('src/a.py');
    for (const bad of ['/etc/passwd', '../x', 'a/../../x', 'a/..', '', '.', 'a\0b', 'C:\\x']) {
      let err: unknown;
      try {
        safeRelativePath(bad.replace('\\0', '\0'));
      } catch (e) {
        err = e;
      }
      expect(isSwtError(err, 'UNSAFE_PATH')).toBe(true);
    }
  });
  it('formats created, modified and deleted files as git diffs', () => {
    expect(fileDiff({ path: 'a.txt', before: 'x\n', after: 'x\n' })).toBe('');
    expect(fileDiff({ path: 'n.txt', before: null, after: 'hi\n' })).toBe('diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hi\n');
    expect(fileDiff({ path: 'x.sh', before: null, after: 'hi\n', mode: '100755' })).toContain('new file mode 100755\n');
    expect(fileDiff({ path: 'd.sh', before: 'x\n', after: null, oldMode: '100755' })).toBe('diff --git a/d.sh b/d.sh\ndeleted file mode 100755\n--- a/d.sh\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n');
    const m = fileDiff({ path: 'm.txt', before: 'a\nb\n', after: 'a\nc' });
    expect(m).toContain('--- a/m.txt\n+++ b/m.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n');
    expect(fileDiff({ path: 'e.txt', before: null, after: '' })).toBe('diff --git a/e.txt b/e.txt\nnew file mode 100644\n');
    expect(fileDiff({ path: 'e.txt', before: '', after: null })).toBe('diff --git a/e.txt b/e.txt\ndeleted file mode 100644\n');
    expect(canonicalDiff([{ path: 'a', before: null, after: '2\n' }, { path: 'b', before: null, after: '1\n' }]).indexOf('a/a')).toBeLessThan(canonicalDiff([{ path: 'a', before: null, after: '2\n' }, { path: 'b', before: null, after: '1\n' }]).indexOf('a/b'));
    expect(isBinary(Buffer.from([1, 0, 2]))).toBe(true);
    expect(isBinary(Buffer.from('text'))).toBe(false);
  });
  it('leaves caches and dependencies out of session diffs', () => {
    for (const p of ['node_modules/x/index.js', '.git/config', 'pkg/__pycache__/m.cpython-311.pyc', '.pytest_cache/v/x', 'a.egg-info/PKG-INFO', 'm.pyc']) {
      expect(isExcludedFromDiff(p)).toBe(true);
    }
    expect(isExcludedFromDiff('src/cache.py')).toBe(false);
  });
  it('keeps a bounded tail of output', () => {
    const t = new TailBuffer(10);
    t.push(Buffer.from('0123456789'));
    t.push(Buffer.from('abcde'));
    expect(t.buffer().toString()).toBe('56789abcde');
    expect(t.truncated).toBe(true);
    expect(t.toString()).toBe('[… 5 bytes of output omitted]\n56789abcde');
  });
  it('splits a whole multiplexed log into its frames, in order, and stops at a cut-off last frame', () => {
    const frame = (stream: number, text: string) => {
      const body = Buffer.from(text);
      const head = Buffer.alloc(8);
      head[0] = stream;
      head.writeUInt32BE(body.length, 4);
      return Buffer.concat([head, body]);
    };
    const raw = Buffer.concat([frame(1, 'out 1\n'), frame(2, 'err 1\n'), frame(1, 'LAST\n'), frame(2, 'cut off').subarray(0, 11)]);
    const got: string[] = [];
    demuxBuffer(raw, (b, stream) => got.push(`${stream}:${b.toString()}`));
    expect(got).toEqual(['1:out 1\n', '2:err 1\n', '1:LAST\n', '2:cut']);
  });
});
