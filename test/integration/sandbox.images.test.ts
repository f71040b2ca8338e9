import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBaseImage, ensureRootfs } from '../../src/sandbox/images/baseImages.js';
import { bundleFromPem, loadCaBundle, type CaBundle } from '../../src/sandbox/images/caCertificates.js';
import { connectDocker, inspectImage } from '../../src/sandbox/docker.js';
import { buildImageFromContext } from '../../src/sandbox/images/imageBuild.js';
import { baseImageName, parseBaseRef, rootfsImageName } from '../../src/sandbox/images/imageRecipes.js';
import { expectNothingLeftBehind } from '../helpers/docker.js';

// Base images: the finish layer on a local ("pulled") image, and two processes building the same
// new base image at once (the file lock makes one build and the other wait).

const docker = connectDocker();
// A CA certificate made for this run only, so the images built here are new and no concurrent
// run of this file (another developer's suite) can share or remove them.
let TEST_CERT: string;
let testBundle: CaBundle;
const madeImages: string[] = [];
let work: string;

async function runIn(image: string, cmd: string): Promise<string> {
  const c = await docker.createContainer({ Image: image, Cmd: ['sh', '-c', cmd], Labels: { 'swt-bot': '1', 'swt-bot.pid': String(process.pid) }, HostConfig: { NetworkMode: 'none' } });
  try {
    await c.start();
    await c.wait();
    const logs = (await c.logs({ stdout: true, stderr: true })) as Buffer;
    // Demultiplex: 8-byte frame headers.
    let out = '';
    for (let i = 0; i + 8 <= logs.length; ) {
      const n = logs.readUInt32BE(i + 4);
      out += logs.subarray(i + 8, i + 8 + n).toString();
      i += 8 + n;
    }
    return out;
  } finally {
    await c.remove({ force: true });
  }
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), `swt-imgtest-${process.pid}-`));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(work, 'key.pem'), '-out', join(work, 'ca.pem'), '-days', '2', '-subj', `/CN=swt-bot test CA ${process.pid} ${Date.now()}`], { stdio: 'ignore' });
  TEST_CERT = readFileSync(join(work, 'ca.pem'), 'utf8');
  testBundle = bundleFromPem([{ source: 'ca.pem', text: TEST_CERT }]);
});

afterAll(async () => {
  for (const name of madeImages) await docker.getImage(name).remove({ force: true }).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
  expectNothingLeftBehind();
});

describe('base images', () => {
  it('finishes a locally present image (as after a docker pull): CA, git, uid 1000 renamed to swt, /testbed', async () => {
    // Stand-in for a pulled node image: a Debian image whose uid/gid 1000 is "node".
    await ensureRootfs(docker, 'bookworm', {});
    const local = `swt-test-local/withnode:${process.pid}`;
    madeImages.push(local);
    await buildImageFromContext(docker, {
      tag: local,
      entries: [{ name: 'Dockerfile', content: `FROM ${rootfsImageName('bookworm')}\nRUN groupadd -g 1000 node && useradd -u 1000 -g 1000 -m node\n` }],
    });
    const progress: string[] = [];
    const name = await ensureBaseImage(local, { docker, caBundle: testBundle, onProgress: (m) => progress.push(m) });
    madeImages.push(name);
    expect(name).toBe(baseImageName(parseBaseRef(local), testBundle));
    expect(progress[0]).toBe(`adding CA certificates, git and the swt user to ${local}`);
    const info = await inspectImage(docker, name);
    expect(info?.Config.Labels?.['swt-bot.base.source']).toBe('pulled');
    expect(info?.Config.User).toBe('1000:1000');
    const out = await runIn(name, `id; echo HOME=$HOME; git --version; grep -c '${TEST_CERT.split('\n')[1]}' /etc/ssl/certs/ca-certificates.crt; stat -c %U /testbed /swt-out`);
    expect(out).toMatch(/^uid=1000\(swt\) gid=1000\(swt\)/);
    expect(out).toContain('HOME=/home/swt');
    expect(out).toMatch(/git version 2\./);
    expect(out).toMatch(/^1$/m);
    expect(out).toMatch(/swt\nswt\n$/);
  });

  it('offline, a Python other than Debian\'s is served by Python 3.11 with a warning', async () => {
    const caBundle = await loadCaBundle();
    const progress: string[] = [];
    const name = await ensureBaseImage('python:3.12', { docker, caBundle, onProgress: (m) => progress.push(m) });
    expect(name).toBe(baseImageName(parseBaseRef('python:3.11'), caBundle));
    expect(progress).toContain('warning: python:3.12 is not available offline; using Python 3.11 (Debian bookworm)');
    expect(await runIn(name, 'python --version; python -m pytest --version')).toMatch(/^Python 3\.11\.\d+\npytest \d+/);
  });

  it("offline, an older Python is served by Debian bullseye's 3.9, where an old commit's code still imports, with a warning", async () => {
    const caBundle = await loadCaBundle();
    const progress: string[] = [];
    const name = await ensureBaseImage('python:3.7', { docker, caBundle, onProgress: (m) => progress.push(m) });
    expect(name).toBe(baseImageName(parseBaseRef('python:3.9'), caBundle));
    expect(progress).toContain('warning: python:3.7 is not available offline; using Python 3.9 (Debian bullseye)');
    // collections.Mapping, which Python 3.10 removed, is what a 2015 requests imports.
    expect(await runIn(name, 'python --version; python -W ignore -c "import collections, pytest; print(collections.Mapping.__name__, pytest.__version__)"')).toMatch(/^Python 3\.9\.\d+\nMapping \d+\.\d+/);
  });

  it('offline, a Python between the two is served by an older one the project allows (a fallback) before the newer one', async () => {
    const caBundle = await loadCaBundle();
    const progress: string[] = [];
    // A 2022 commit asks for 3.10 by its date and allows 3.8 and 3.9: NumPy of its time has no 3.11 wheels.
    const name = await ensureBaseImage('python:3.10', { docker, caBundle, onProgress: (m) => progress.push(m), fallbacks: ['python:3.9', 'python:3.8'] });
    expect(name).toBe(baseImageName(parseBaseRef('python:3.9'), caBundle));
    expect(progress).toContain('warning: python:3.10 is not available offline; using Python 3.9 (Debian bullseye), which the project allows');
    // No fallback an offline build has: the nearest, as before.
    const nearest = await ensureBaseImage('python:3.10', { docker, caBundle, onProgress: (m) => progress.push(m), fallbacks: ['python:3.8'] });
    expect(nearest).toBe(baseImageName(parseBaseRef('python:3.11'), caBundle));
  });

  it('two processes asking for the same new base image at once build it once', async () => {
    // A CA bundle no other test uses, so the image is new (and removed again at the end).
    const bundle = bundleFromPem([{ source: 'other.pem', text: TEST_CERT + '\n' }]);
    const name = baseImageName(parseBaseRef('debian:bookworm'), bundle);
    madeImages.push(name);
    expect(await inspectImage(docker, name)).toBeUndefined();
    writeFileSync(join(work, 'loader.mjs'), `export async function resolve(spec, ctx, next) {
  try { return await next(spec, ctx); } catch (e) {
    if (spec.startsWith('.') && spec.endsWith('.js')) return next(spec.slice(0, -3) + '.ts', ctx);
    throw e;
  }
}
`);
    writeFileSync(join(work, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(work, 'loader.mjs')).href)});\n`);
    writeFileSync(join(work, 'child.mjs'), `
import { ensureBaseImage } from '${pathToFileURL(resolve('src/sandbox/images/baseImages.ts')).href}';
import { bundleFromPem } from '${pathToFileURL(resolve('src/sandbox/images/caCertificates.ts')).href}';
import { connectDocker } from '${pathToFileURL(resolve('src/sandbox/docker.ts')).href}';
const name = await ensureBaseImage('debian:bookworm', {
  docker: connectDocker(),
  caBundle: bundleFromPem([{ source: 'other.pem', text: process.env.TEST_CERT + '\\n' }]),
  pull: false,
  onProgress: (m) => console.log('PROGRESS ' + m),
});
console.log('NAME ' + name);
`);
    const child = () =>
      new Promise<{ code: number | null; out: string }>((res) => {
        const p = spawn(process.execPath, ['--import', pathToFileURL(join(work, 'register.mjs')).href, join(work, 'child.mjs')], {
          env: { ...process.env, TEST_CERT, LOG_LEVEL: 'warn' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        p.stdout.on('data', (c: Buffer) => (out += c.toString()));
        p.stderr.on('data', (c: Buffer) => (out += c.toString()));
        p.on('exit', (code) => res({ code, out }));
      });
    const started = Date.now();
    const [a, b] = await Promise.all([child(), child()]);
    const elapsed = Date.now() - started;
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(a.out).toContain(`NAME ${name}`);
    expect(b.out).toContain(`NAME ${name}`);
    const builds = (a.out + b.out).split('\n').filter((l) => l.startsWith(`PROGRESS ${name}: Step 1/`));
    expect(builds).toHaveLength(1);
    expect(a.out + b.out).toContain(`PROGRESS waiting for another process building ${name}`);
    expect(await inspectImage(docker, name)).toBeDefined();
    console.log(`two-process base image build: ${elapsed} ms`);
  });
});
