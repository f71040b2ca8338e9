/**
 * The App's Docker image builds from the checkout with `npm ci` on the committed lockfile (no
 * registry for images here: NODE_IMAGE is the product's own offline-built node:22), and the
 * built image runs the CLI. The build stage installs from the npm registry through the host's network.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureBaseImage } from '../../src/sandbox/images/baseImages.js';
import { loadCaBundle } from '../../src/sandbox/images/caCertificates.js';

const ROOT = process.cwd();

/** The files a clone would have: tracked and untracked-but-not-ignored, as they are now. */
function copyCheckout(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const f of files) {
    try {
      mkdirSync(join(to, dirname(f)), { recursive: true });
      cpSync(join(ROOT, f), join(to, f));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // deleted in the work tree
    }
  }
}

describe('the Docker image', () => {
  const tag = `swt-bot-image-test:${process.pid}`;
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'swt-image-'));
    copyCheckout(dir);
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    spawnSync('docker', ['rmi', '-f', tag], { stdio: 'ignore' });
  });

  it('builds with npm ci on the committed lockfile and runs the CLI', async () => {
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8')).toMatch(/^RUN npm ci\b/m);
    const nodeImage = await ensureBaseImage('node:22', { caBundle: await loadCaBundle() });
    const build = spawnSync('docker', ['build', '-q', '--build-arg', `NODE_IMAGE=${nodeImage}`, '-t', tag, dir], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect({ status: build.status, stderr: build.status === 0 ? '' : build.stderr.slice(-4000) }).toEqual({ status: 0, stderr: '' });
    const help = spawnSync('docker', ['run', '--rm', '--network', 'none', tag, 'node', 'dist/cli/bin.js', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/reproduce/);
    expect(help.stdout).toMatch(/validate/);
    // No benchmark or test code is shipped with the App.
    const listing = spawnSync('docker', ['run', '--rm', '--network', 'none', tag, 'sh', '-c', 'ls dist; ls node_modules | grep -c . ; test ! -e node_modules/jest && test ! -e dist/bench && echo no-dev'], { encoding: 'utf8' });
    expect(listing.stdout).toMatch(/no-dev/);
  });
});
