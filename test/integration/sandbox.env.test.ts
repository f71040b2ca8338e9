import { createDockerSandbox, loadCaBundle } from '../../src/sandbox/index.js';
import { connectDocker } from '../../src/sandbox/docker.js';
import { isSwtError } from '../../src/util/errors.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { containersOfOursOnceRetired, expectNothingLeftBehind, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo } from '../helpers/gitRepo.js';

// Environment images on real containers: cache hits, install failures, CA certificates, node:18 + npm via the proxy.

const docker = connectDocker();
let sandbox: Sandbox;

beforeAll(() => {
  sandbox = createDockerSandbox();
});

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
});

describe('environment images', () => {
  it('caches an environment: the second ensure is a hit and does not run the install again', async () => {
    const repo = createGitRepo({ 'requirements.txt': '# nothing yet\n', 'test_a.py': 'def test_a():\n    assert 1\n' });
    const install = 'date +%s%N > .installed-at && echo installed';
    const progress1: string[] = [];
    const e1 = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install }, (m) => progress1.push(m));
    expect(e1.cached).toBe(false);
    expect(e1.snapshotRev).toBe(repo.sha);
    expect(progress1.some((m) => m.startsWith('installing dependencies'))).toBe(true);
    const id1 = (await docker.getImage(e1.image).inspect()).Id;

    const progress2: string[] = [];
    const e2 = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install }, (m) => progress2.push(m));
    expect(e2.cached).toBe(true);
    expect(e2.key).toBe(e1.key);
    expect(e2.image).toBe(e1.image);
    expect((await docker.getImage(e2.image).inspect()).Id).toBe(id1);
    expect(progress2.some((m) => m.startsWith('installing dependencies'))).toBe(false);

    const stamp = async (image: typeof e1) =>
      (await sandbox.run({ env: image, repo: repo.path, state: { rev: repo.sha, patches: [] }, command: 'cat .installed-at' })).output.trim();
    const s1 = await stamp(e1);
    expect(s1).toMatch(/^\d{10,}$/);
    expect(await stamp(e2)).toBe(s1);

    // A change outside the manifests keeps the key (the run overlays it); a manifest change rebuilds.
    const rev2 = repo.commit({ 'test_a.py': 'def test_a():\n    assert 2\n' });
    const e3 = await sandbox.ensureEnvironment({ repo: repo.path, rev: rev2, baseImage: 'python:3.11', install });
    expect(e3.cached).toBe(true);
    expect(e3.snapshotRev).toBe(e1.snapshotRev);
    const run3 = await sandbox.run({ env: e3, repo: repo.path, state: { rev: rev2, patches: [] }, command: 'cat test_a.py' });
    expect(run3.output).toContain('assert 2');
    const rev3 = repo.commit({ 'requirements.txt': '# still nothing, but changed\n' });
    const e4 = await sandbox.ensureEnvironment({ repo: repo.path, rev: rev3, baseImage: 'python:3.11', install });
    expect(e4.cached).toBe(false);
    expect(e4.key).not.toBe(e1.key);
    expect(e4.snapshotRev).toBe(rev3);
  });

  it('keeps environments of two repositories with the same manifests apart, even when built at once', async () => {
    const a = createGitRepo({ 'who.txt': 'repo A\n' });
    const b = createGitRepo({ 'who.txt': 'repo B\n' });
    const install = 'cp who.txt .installed-for';
    const [ea, eb] = await Promise.all([
      sandbox.ensureEnvironment({ repo: a.path, rev: a.sha, baseImage: 'python:3.11', install }),
      sandbox.ensureEnvironment({ repo: b.path, rev: b.sha, baseImage: 'python:3.11', install }),
    ]);
    // The repository is part of the key: the same manifests and install make two keys.
    expect(ea.key).not.toBe(eb.key);
    expect(ea.image).not.toBe(eb.image);
    expect(ea.snapshotRev).toBe(a.sha);
    expect(eb.snapshotRev).toBe(b.sha);
    const who = async (repo: typeof a, env: typeof ea) =>
      (await sandbox.run({ env, repo: repo.path, state: { rev: repo.sha, patches: [] }, command: 'cat who.txt .installed-for' })).output;
    expect(await who(a, ea)).toBe('repo A\nrepo A\n');
    expect(await who(b, eb)).toBe('repo B\nrepo B\n');
    // Each repository finds its own image again.
    const again = await sandbox.ensureEnvironment({ repo: a.path, rev: a.sha, baseImage: 'python:3.11', install });
    expect(again).toMatchObject({ cached: true, image: ea.image });
  });

  it('starts a build whose manifests changed from the nearest layer: the installed tree of the revision before, its source brought up to date', async () => {
    // The install appends what it installs: from the nearest layer it finds the earlier install's work.
    const repo = createGitRepo({ 'requirements.txt': 'one\n', 'old.py': 'OLD = 1\n', 'keep.py': 'K = 1\n' });
    const install = 'cat requirements.txt >> .installed';
    const e1 = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install });
    expect(e1.from).toBeUndefined();
    const rev2 = repo.commit({ 'requirements.txt': 'two\n', 'old.py': null, 'new.py': 'NEW = 1\n' });
    const progress: string[] = [];
    const e2 = await sandbox.ensureEnvironment({ repo: repo.path, rev: rev2, baseImage: 'python:3.11', install }, (m) => progress.push(m));
    expect(e2.cached).toBe(false);
    expect(e2.from).toBe(e1.image);
    expect(progress.some((m) => m.includes(`over the nearest layer ${e1.image}`))).toBe(true);
    const labels = (await docker.getImage(e2.image).inspect()).Config.Labels;
    expect(labels['swt-bot.env.depth']).toBe('1');
    expect(labels['swt-bot.env.snapshotRev']).toBe(rev2);
    // What the image itself holds: both installs' work, the new revision's files, not the deleted one.
    const out = async (env: typeof e1) => {
      const c = await docker.createContainer({ Image: env.image, Cmd: ['sh', '-c', 'cat .installed; ls /testbed | sort | tr "\\n" " "'], Tty: true, HostConfig: { NetworkMode: 'none' } });
      try {
        await c.start();
        await c.wait();
        const log = (await c.logs({ stdout: true, stderr: true })) as unknown as Buffer;
        return log.toString('utf8').replace(/\r/g, '');
      } finally {
        await c.remove({ force: true });
      }
    };
    const seen = await out(e2);
    expect(seen).toContain('one\n');
    expect(seen).toContain('two\n');
    expect(seen).toContain('keep.py new.py requirements.txt');
    expect(seen).not.toContain('old.py');

    // Turned off (SWT_NEAREST_LAYER=0), the same build starts from the base image.
    const rev3 = repo.commit({ 'requirements.txt': 'three\n' });
    process.env.SWT_NEAREST_LAYER = '0';
    try {
      const e3 = await sandbox.ensureEnvironment({ repo: repo.path, rev: rev3, baseImage: 'python:3.11', install });
      expect(e3.from).toBeUndefined();
      const plain = await out(e3);
      expect(plain).not.toContain('one\n');
      expect(plain).toContain('three\n');
    } finally {
      delete process.env.SWT_NEAREST_LAYER;
    }
  });

  it('reports a failing install as INSTALL_FAILED with the last lines of its output and leaves no container', async () => {
    const repo = createGitRepo({ 'setup.cfg': '[metadata]\nname = broken\n' });
    const install = 'echo step-one; echo "boom: the thing is missing" >&2; exit 3';
    let error: unknown;
    try {
      await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install });
    } catch (e) {
      error = e;
    }
    expect(isSwtError(error, 'INSTALL_FAILED')).toBe(true);
    const msg = (error as Error).message;
    expect(msg).toContain('exited with 3');
    expect(msg).toContain('step-one');
    expect(msg).toContain('boom: the thing is missing');
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('bakes the extra CA certificates into the image and points the CA variables at them', async () => {
    const bundle = await loadCaBundle();
    // The suite relies on the machine's configured bundle (SWT_EXTRA_CA_CERTS / NODE_EXTRA_CA_CERTS).
    const s = bundle ? sandbox : createDockerSandbox({ caPaths: ['/etc/ssl/certs/ca-certificates.crt'] });
    const first = (bundle ?? (await loadCaBundle({ paths: ['/etc/ssl/certs/ca-certificates.crt'] })))!.certs[0]!;
    const marker = first.split('\n')[1]!;
    const repo = createGitRepo({ 'a.txt': 'a\n' });
    const env = await s.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'python:3.11', install: '' });
    const r = await s.run({
      env,
      repo: repo.path,
      state: { rev: repo.sha, patches: [] },
      command: `grep -cF '${marker}' /etc/ssl/certs/ca-certificates.crt; ls /usr/local/share/ca-certificates | head -1; env | grep -E '^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|REQUESTS_CA_BUNDLE|PIP_CERT|GIT_SSL_CAINFO|npm_config_cafile)=' | sort`,
    });
    expect(r.exitCode).toBe(0);
    const lines = r.output.trim().split('\n');
    expect(Number(lines[0])).toBeGreaterThanOrEqual(1);
    expect(lines[1]).toBe('swt-extra-001.crt');
    for (const v of ['GIT_SSL_CAINFO', 'NODE_EXTRA_CA_CERTS', 'PIP_CERT', 'REQUESTS_CA_BUNDLE', 'SSL_CERT_FILE', 'npm_config_cafile']) {
      expect(lines).toContain(`${v}=/etc/ssl/certs/ca-certificates.crt`);
    }
  });

  it('builds node:18 offline and installs an npm package through the proxy during the install step', async () => {
    const repo = createGitRepo({
      'package.json': JSON.stringify({ name: 'tiny', version: '1.0.0', private: true, dependencies: { 'is-number': '7.0.0' } }, null, 2) + '\n',
      'index.js': "module.exports = (x) => require('is-number')(x);\n",
    });
    const install = 'npm install --no-audit --no-fund && npm view is-number@7.0.0 version > .npm-view.txt';
    const progress: string[] = [];
    const env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'node:18', install }, (m) => progress.push(m));
    expect(env.baseImage).toMatch(/^swt-base\/node:18-[0-9a-f]{8}$/);
    const r = await sandbox.run({
      env,
      repo: repo.path,
      state: { rev: repo.sha, patches: [] },
      command: `node -e "console.log('node', process.version, require('./index.js')(5), require('./index.js')('x'))"; cat .npm-view.txt; id -u`,
    });
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/^node v18\.\d+\.\d+ true false$/m);
    expect(r.output).toMatch(/^7\.0\.0$/m);
    expect(r.output).toMatch(/^1000$/m);
  });

  it('saves a Node install into the package cache and, its image gone, extracts it in place of the same install: no registry asked, the revision\'s tracked files kept', async () => {
    const repo = createGitRepo({
      'package.json': JSON.stringify({ name: 'tiny', version: '1.0.0', private: true, dependencies: { 'is-number': '7.0.0' } }, null, 2) + '\n',
      'index.js': "module.exports = (x) => require('is-number')(x);\n",
    });
    // The stamp tells one run of the install from another; the install also rewrites a tracked file.
    const install = 'npm install --no-audit --no-fund && cat /proc/sys/kernel/random/uuid > .stamp && echo rewritten >> index.js';
    const spec = { repo: repo.path, baseImage: 'node:18', install, warm: { saveInstall: true } };
    const look = 'cat .stamp; ls node_modules/is-number/package.json; cat index.js';
    const first = await sandbox.ensureEnvironment({ ...spec, rev: repo.sha });
    const r1 = await sandbox.run({ env: first, repo: repo.path, state: { rev: repo.sha, patches: [] }, command: look });
    const [stamp, ...rest1] = r1.output.trim().split('\n');
    expect(rest1).toEqual(['node_modules/is-number/package.json', "module.exports = (x) => require('is-number')(x);", 'rewritten']);
    // A later revision (same manifests, so the same key) whose image is gone, built where the proxy refuses npm's registry.
    const rev2 = repo.commit({ 'index.js': "module.exports = (x) => require('is-number')(x) && x > 0;\n" });
    await docker.getImage(first.image).remove({ force: true });
    const refused = createDockerSandbox({ egress: { hosts: ['deb.debian.org'] } });
    const steps: string[] = [];
    const second = await refused.ensureEnvironment({ ...spec, rev: rev2 }, (m) => steps.push(m));
    expect(second.cached).toBe(false);
    // Restored with no network at all: no install network or egress proxy is set up for it.
    expect(steps.some((m) => m.startsWith('restoring the saved install'))).toBe(true);
    expect(steps.some((m) => /installing dependencies|egress proxy/i.test(m))).toBe(false);
    expect(second.key).toBe(first.key);
    const r2 = await refused.run({ env: second, repo: repo.path, state: { rev: rev2, patches: [] }, command: `${look}; ls $HOME/.swt-tracked 2>&1 | grep -c 'No such'` });
    // The same install's stamp and node_modules; index.js as the revision has it (a saved install holds no tracked file); the build's list of tracked files gone.
    expect(r2.output.trim().split('\n')).toEqual([stamp, 'node_modules/is-number/package.json', "module.exports = (x) => require('is-number')(x) && x > 0;", '1']);
  }, 900_000);
});
