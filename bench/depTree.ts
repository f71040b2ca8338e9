/**
 * bench:harness's dependency-tree scaling: a Node project depending on N packages (10, 100, 1,000)
 * that exist only in its package cache (local tarballs put there with `npm cache add`; no registry
 * has them, so the install can only succeed from the cache), locked by package-lock.json. Measured:
 * its cold environment build (`npm ci`, detected) with that warm cache. Then one dependency added
 * (a new revision): its build from nothing and from the nearest layer (the first revision's image),
 * with `npm ci` and with `npm install` (npm ci always deletes node_modules; npm install keeps what
 * still fits).
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import tarStream from 'tar-stream';
import { prepareContext } from '../src/pipeline/context.js';
import { packageCacheScope } from '../src/sandbox/environments/environment.js';
import { ensureBaseImage } from '../src/sandbox/images/baseImages.js';
import { git as runGit } from '../src/repo/gitExec.js';
import { containerLabels } from '../src/sandbox/containers/limits.js';
import { registerContainer, removeContainer } from '../src/sandbox/containers/liveContainers.js';
import { CACHE_MOUNT, cacheVolumeName, ensureCacheVolume } from '../src/sandbox/environments/packageCache.js';
import type { Sandbox } from '../src/sandbox/types.js';

const IMAGE = 'node:22';

export interface DepTreeRow {
  packages: number;
  /** Cold environment build, every package from the cache. */
  coldWarmCacheMs: number;
  /** One dependency added: the build from nothing and from the nearest layer, per install command. */
  oneChanged: Array<{ install: string; fromNothingMs: number; fromNearestMs: number }>;
}

async function tarOf(entries: Record<string, string>): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => void chunks.push(c as Buffer));
  const done = new Promise<void>((r, j) => (pack.on('end', r), pack.on('error', j)));
  for (const [name, text] of Object.entries(entries)) pack.entry({ name, mode: 0o644, mtime: new Date(0) }, text);
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** The npm tarball of package `name`@1.0.0 (a one-line module). */
async function packageTarball(name: string): Promise<Buffer> {
  return gzipSync(await tarOf({ 'package/package.json': JSON.stringify({ name, version: '1.0.0', main: 'index.js' }), 'package/index.js': `module.exports = ${JSON.stringify(name)};\n` }));
}

const nameOf = (i: number) => `swt-bench-synth-${i}`;

/** package.json + package-lock.json (registry URLs, integrity) of a project depending on the first n packages. */
async function writeManifests(dir: string, name: string, n: number, integrity: string[]): Promise<void> {
  const deps = Object.fromEntries(Array.from({ length: n }, (_, i) => [nameOf(i), '1.0.0']));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', scripts: { test: 'node --test' }, dependencies: deps }, null, 2));
  const packages: Record<string, unknown> = { '': { name, version: '1.0.0', dependencies: deps } };
  for (let i = 0; i < n; i++) {
    packages[`node_modules/${nameOf(i)}`] = { version: '1.0.0', resolved: `https://registry.npmjs.org/${nameOf(i)}/-/${nameOf(i)}-1.0.0.tgz`, integrity: integrity[i] };
  }
  await writeFile(join(dir, 'package-lock.json'), JSON.stringify({ name, version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2));
}

/** The project: its manifests + one test. */
async function project(root: string, n: number, integrity: string[]): Promise<{ dir: string; base: string }> {
  const dir = join(root, `deps-${n}`);
  await mkdir(join(dir, 'test'), { recursive: true });
  await writeManifests(dir, `deps-${n}`, n, integrity);
  await writeFile(join(dir, 'test', 'deps.test.js'), `const test = require('node:test');\ntest('loads', () => require(${JSON.stringify(nameOf(0))}));\n`);
  const git = (...a: string[]) => runGit(dir, ['-c', 'user.name=b', '-c', 'user.email=b@b', ...a]);
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'base');
  return { dir, base: (await git('rev-parse', 'HEAD')).trim() };
}

/** Puts the tarballs into the repository's package cache, offline, as the sandbox user. */
async function seedCache(docker: Docker, volume: string, image: string, tarballs: Buffer[]): Promise<void> {
  const c = await docker.createContainer({
    Image: image,
    Entrypoint: [],
    Cmd: ['sh', '-c', `npm_config_cache=${CACHE_MOUNT}/npm npm cache add /home/swt/seed/*.tgz > /dev/null`],
    User: '1000:1000',
    NetworkDisabled: true,
    Labels: containerLabels('cache-init'),
    HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: volume, Target: CACHE_MOUNT }] },
  });
  registerContainer(docker, c.id);
  try {
    const files: Record<string, Buffer> = {};
    tarballs.forEach((t, i) => (files[`seed/${nameOf(i)}-1.0.0.tgz`] = t));
    const pack = tarStream.pack();
    for (const [name, buf] of Object.entries(files)) pack.entry({ name, mode: 0o644, uid: 1000, gid: 1000 }, buf);
    pack.finalize();
    await c.putArchive(pack as unknown as NodeJS.ReadableStream, { path: '/home/swt' });
    await c.start();
    const r = (await c.wait()) as { StatusCode: number };
    if (r.StatusCode !== 0) throw new Error(`npm cache add exited with ${r.StatusCode}`);
  } finally {
    await removeContainer(docker, c.id).catch(() => undefined);
  }
}

/** Builds the environment of `input` with nearest-layer reuse on or off; the image is removed after. */
async function buildOnce(sandbox: Sandbox, docker: Docker, input: Parameters<typeof prepareContext>[1], nearest: boolean): Promise<{ ms: number; from?: string }> {
  const was = process.env.SWT_NEAREST_LAYER;
  process.env.SWT_NEAREST_LAYER = nearest ? '1' : '0';
  try {
    const t = performance.now();
    const ctx = await prepareContext(sandbox, input);
    const ms = performance.now() - t;
    if (ctx.env.cached) throw new Error('the environment was cached: not a cold build');
    await docker.getImage(ctx.env.image).remove({ force: true });
    return { ms, ...(ctx.env.from ? { from: ctx.env.from } : {}) };
  } finally {
    if (was === undefined) delete process.env.SWT_NEAREST_LAYER;
    else process.env.SWT_NEAREST_LAYER = was;
  }
}

/**
 * One dependency added to the project at `dir` (a new commit): its build from nothing and from
 * the nearest layer (the image of the revision before, built first and removed after).
 */
async function oneDependencyChanged(sandbox: Sandbox, docker: Docker, dir: string, base: string, n: number, integrity: string[], install: string, log: (m: string) => void) {
  const git = (...a: string[]) => runGit(dir, ['-c', 'user.name=b', '-c', 'user.email=b@b', ...a]);
  const before = { repo: dir, base, image: IMAGE, install, testCmd: 'node --test {files}' };
  const layer = await prepareContext(sandbox, before);
  await writeManifests(dir, `deps-${n}`, n + 1, integrity);
  await git('commit', '-qam', `add ${nameOf(n)}`);
  const after = { ...before, base: (await git('rev-parse', 'HEAD')).trim() };
  try {
    log(`dependency tree: ${n} packages, one added, \`${install}\` from nothing and from the nearest layer`);
    const fromNothing = await buildOnce(sandbox, docker, after, false);
    const fromNearest = await buildOnce(sandbox, docker, after, true);
    if (fromNearest.from !== layer.env.image) throw new Error(`the build did not start from the nearest layer ${layer.env.image} (${fromNearest.from ?? 'the base image'})`);
    return { install, fromNothingMs: fromNothing.ms, fromNearestMs: fromNearest.ms };
  } finally {
    await git('reset', '-q', '--hard', base);
    await docker.getImage(layer.env.image).remove({ force: true }).catch(() => undefined);
  }
}

export async function depTreeScaling(sandbox: Sandbox, docker: Docker, root: string, sizes: number[], log: (m: string) => void): Promise<DepTreeRow[]> {
  // One more than the largest: the dependency a new revision adds.
  const max = Math.max(...sizes) + 1;
  const tarballs = await Promise.all(Array.from({ length: max }, (_, i) => packageTarball(nameOf(i))));
  const integrity = tarballs.map((t) => `sha512-${createHash('sha512').update(t).digest('base64')}`);
  const baseImage = await ensureBaseImage(IMAGE, { docker });
  const rows: DepTreeRow[] = [];
  for (const n of sizes) {
    const p = await project(root, n, integrity);
    const volume = cacheVolumeName(await packageCacheScope({ repo: p.dir }));
    try {
      await ensureCacheVolume(docker, await packageCacheScope({ repo: p.dir }), baseImage);
      log(`dependency tree: seeding the package cache with ${n} packages`);
      await seedCache(docker, volume, baseImage, tarballs.slice(0, n + 1));
      const input = { repo: p.dir, base: p.base, image: IMAGE, testCmd: 'node --test {files}' };
      let best = Infinity;
      for (let round = 0; round < 2; round++) {
        log(`dependency tree: ${n} packages, cold environment build from the cache (${round + 1}/2)`);
        const t = performance.now();
        const ctx = await prepareContext(sandbox, input);
        best = Math.min(best, performance.now() - t);
        if (ctx.env.cached) throw new Error('the environment was cached: not a cold build');
        await docker.getImage(ctx.env.image).remove({ force: true });
      }
      const oneChanged = [];
      for (const install of ['npm ci', 'npm install']) oneChanged.push(await oneDependencyChanged(sandbox, docker, p.dir, p.base, n, integrity, install, log));
      rows.push({ packages: n, coldWarmCacheMs: best, oneChanged });
    } finally {
      await docker.getVolume(volume).remove().catch(() => undefined);
    }
  }
  return rows;
}
