import { execFileSync } from 'node:child_process';
import { connectDocker } from '../../src/sandbox/docker.js';
import { packageCacheVolume } from '../../src/sandbox/environments/environment.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { CACHE_LABELS } from '../../src/sandbox/environments/packageCache.js';
import type { Environment, EnvironmentSpec, Sandbox } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createBareMirror, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

/**
 * Environment images and package caches belong to one repository, and an untrusted head's install
 * writes into neither its repository's cache nor an image a trusted run will reuse. Each install
 * plants a marker (a fresh UUID) in its image and in the package cache it was given.
 */

const docker = connectDocker();
let sandbox: Sandbox;
const scopes = ['redteam-a/app', 'redteam-b/app', 'redteam-c/app', 'redteam-d/app'].map((s) => `${s}-${process.pid}`);

// Records what the cache held before, then plants this install's marker in the image and in the cache.
const PLANT = [
  'mkdir -p /swt-cache/planted',
  '(ls /swt-cache/planted; cat /swt-cache/planted/* 2>/dev/null; true) > .cache-seen',
  'cat /proc/sys/kernel/random/uuid > .env-marker',
  'cp .env-marker /swt-cache/planted/marker-$(cat .env-marker)',
].join(' && ');

beforeAll(() => {
  sandbox = createDockerSandbox();
});

afterAll(async () => {
  await removeEnvImagesBuiltFrom(commitsMade());
  for (const scope of scopes) await docker.getVolume(await packageCacheVolume({ repo: '/', cacheScope: scope })).remove().catch(() => undefined);
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
});

const ensure = (repo: TempRepo, rev: string, scope: string, install: string, more: Partial<EnvironmentSpec> = {}) =>
  sandbox.ensureEnvironment({ repo: repo.path, rev, baseImage: 'node:22', install, cacheScope: scope, ...more });

const read = async (repo: TempRepo, env: Environment, rev: string, files: string) =>
  (await sandbox.run({ env, repo: repo.path, state: { rev, patches: [] }, command: `cat ${files}` })).output;

/** The package cache volume's files (path, size, mtime), read by a throwaway container of our own. */
function cacheListing(volume: string, image: string): string {
  return execFileSync('docker', ['run', '--rm', '--network', 'none', '--entrypoint', 'sh', '-v', `${volume}:/c:ro`, image, '-c', 'cd /c && find . -printf "%p %s %T@\\n" | sort'], { encoding: 'utf8' });
}

describe('environments and package caches stay with their repository', () => {
  it('attack: repository B, holding the same commit and manifests as A (a fork), reuses A\'s environment image and package cache', async () => {
    const a = createGitRepo({ 'package.json': '{"name":"same","version":"1.0.0","private":true}\n', 'index.js': 'module.exports = 1;\n' });
    const b = createBareMirror(a);
    const ea = await ensure(a, a.sha, scopes[0]!, PLANT);
    const markerA = (await read(a, ea, a.sha, '.env-marker')).trim();
    expect(markerA).toMatch(/^[0-9a-f-]{36}$/);
    const eb = await ensure(b, b.sha, scopes[1]!, PLANT);
    // B got its own build: same snapshot commit, same manifests, same install, yet not A's image.
    expect(eb).toMatchObject({ cached: false, snapshotRev: a.sha });
    expect(eb.image).not.toBe(ea.image);
    const seenByB = await read(b, eb, b.sha, '.env-marker .cache-seen');
    expect(seenByB).not.toContain(markerA);
    // B's install found an empty cache: nothing A planted.
    expect(seenByB.trim().split('\n')).toHaveLength(1);
    // And A finds its own image again.
    expect(await ensure(a, a.sha, scopes[0]!, PLANT)).toMatchObject({ cached: true, image: ea.image });
  });

  it('attack: a fork head fetched into the repository builds an image that the base\'s trusted runs then reuse', async () => {
    const repo = createGitRepo({ 'package.json': '{"name":"base","version":"1.0.0","private":true}\n', 'index.js': 'module.exports = 1;\n' });
    const base = repo.sha;
    // The fork's head changes no manifest: same key material as base, had trust not been part of it.
    const forkHead = repo.commit({ 'index.js': 'module.exports = 2; // fork\n' }, 'fork head');
    repo.git('update-ref', 'refs/pull/7/head', forkHead);
    repo.git('reset', '-q', '--hard', base);
    const forkEnv = await ensure(repo, forkHead, scopes[3]!, PLANT, { cacheWrite: false });
    const forkMarker = (await read(repo, forkEnv, forkHead, '.env-marker')).trim();
    const baseEnv = await ensure(repo, base, scopes[3]!, PLANT);
    expect(baseEnv.cached).toBe(false);
    expect(baseEnv.image).not.toBe(forkEnv.image);
    expect(await read(repo, baseEnv, base, '.env-marker .cache-seen')).not.toContain(forkMarker);
    // A later main commit (no manifest change) reuses base's image, never the fork's.
    const next = repo.commit({ 'index.js': 'module.exports = 3;\n' }, 'main moves on');
    const nextEnv = await ensure(repo, next, scopes[3]!, PLANT);
    expect(nextEnv).toMatchObject({ cached: true, image: baseEnv.image });
  });

  it('attack: an untrusted head\'s install (cacheWrite: false) plants packages in the repository\'s cache; it still installs', async () => {
    const pkg = (deps: Record<string, string>) => JSON.stringify({ name: 'c', version: '1.0.0', private: true, dependencies: deps }) + '\n';
    const repo = createGitRepo({ 'package.json': pkg({ 'is-number': '7.0.0' }) });
    const scope = scopes[2]!;
    // Both installs save what they made (as Node's do): the trusted one into the cache, the untrusted one into its copy only.
    const saves = { warm: { saveInstall: true } };
    const trusted = await ensure(repo, repo.sha, scope, `npm install --no-audit --no-fund && ${PLANT}`, saves);
    const volume = await packageCacheVolume({ repo: repo.path, cacheScope: scope });
    const before = cacheListing(volume, trusted.baseImage);
    expect(before).toContain('./npm/_cacache');
    expect(before).toContain('./planted/marker-');
    expect(before).toMatch(/^\.\/installs\/[0-9a-f]{32}\/0\.tar /m);

    const head = repo.commit({ 'package.json': pkg({ 'is-number': '7.0.0', 'is-odd': '3.0.1' }) }, 'untrusted head adds a dependency');
    const evil = [
      'ls /swt-cache/planted > .saw-planted',
      // The copy leaves the trusted saved installs behind (never this key's, and each a whole tree).
      '(ls /swt-cache/installs 2>/dev/null | wc -l > .saw-installs)',
      'npm install --no-audit --no-fund',
      // Overwrite and add to everything cached, as a poisoning install script would.
      'for f in $(find /swt-cache/npm -type f | head -n 50); do echo poisoned > "$f"; done',
      'rm -rf /swt-cache/planted && echo evil > /swt-cache/evil',
    ].join(' && ');
    const untrusted = await ensure(repo, head, scope, evil, { cacheWrite: false, ...saves });
    expect(untrusted.cached).toBe(false);
    // It installed (is-odd came from the registry, is-number from the copy of the cache or the registry).
    const r = await sandbox.run({ env: untrusted, repo: repo.path, state: { rev: head, patches: [] }, command: "node -e \"console.log(require('is-odd')(3))\"; cat .saw-planted; echo installs-seen=$(cat .saw-installs)" });
    expect(r.output).toMatch(/^true$/m);
    // It saw a copy of the cache (the trusted install's marker)...
    expect(r.output).toMatch(/^marker-[0-9a-f-]{36}$/m);
    expect(r.output).toMatch(/^installs-seen=0$/m);
    // ...and the cache itself is as the trusted install left it, file for file.
    expect(cacheListing(volume, trusted.baseImage)).toBe(before);
    // The copy is gone.
    const throwaways = await docker.listVolumes({ filters: { label: [`${CACHE_LABELS.pid}=${process.pid}`] } });
    expect(throwaways.Volumes ?? []).toEqual([]);
  });
});
