import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { envValues, type Environment } from '../../settings/index.js';
import { SwtError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { followProgress, type Docker } from '../docker.js';
import { IMAGE_LABELS, rootfsImageName } from './imageRecipes.js';
import { makeTempDir, removeTempDir } from '../../util/tempDirs.js';

/**
 * The offline starting point: a Debian rootfs made by debootstrap from the Debian mirror (the only
 * package source besides npm), imported as an image with dockerode's importImage. ~35 s.
 */

export function debianMirror(env?: Environment): string {
  return envValues(env).SWT_DEBIAN_MIRROR;
}

function asRoot(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? [cmd, args] : ['sudo', ['-n', cmd, ...args]];
}

function runTool(cmd: string, args: string[], onLine?: (l: string) => void): Promise<{ code: number; tail: string[] }> {
  const [bin, argv] = asRoot(cmd, args);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    let partial = '';
    const onData = (c: Buffer) => {
      const text = partial + c.toString('utf8');
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) {
        tail.push(l);
        if (tail.length > 40) tail.shift();
        onLine?.(l);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, tail }));
  });
}

/** Mount points at or under dir (debootstrap mounts /proc and /sys; a failed run may leave them). */
async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return info
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(dir + '/')))
    .sort((a, b) => b.length - a.length);
}

async function unmountAll(dir: string): Promise<void> {
  for (const m of await mountsUnder(dir)) await runTool('umount', ['-l', m]).catch(() => undefined);
}

export async function removeRootfsDir(dir: string): Promise<void> {
  await unmountAll(dir);
  if ((await mountsUnder(dir)).length > 0) throw new Error(`refusing to delete ${dir}: still has mounts`);
  try {
    await removeTempDir(dir);
  } catch {
    await runTool('rm', ['-rf', '--one-file-system', dir]);
    await rm(dir, { recursive: true, force: true });
  }
}

export async function buildDebianRootfs(
  docker: Docker,
  opts: { suite: string; mirror?: string; onProgress?: (m: string) => void; log?: Logger },
): Promise<string> {
  const name = rootfsImageName(opts.suite);
  const mirror = opts.mirror ?? debianMirror();
  const dir = await makeTempDir('rootfs');
  const root = join(dir, 'root');
  const started = Date.now();
  try {
    opts.onProgress?.(`debootstrap --variant=minbase ${opts.suite} from ${mirror} (about a minute)`);
    const r = await runTool('debootstrap', ['--variant=minbase', opts.suite, root, mirror], (l) => {
      opts.log?.debug({ debootstrap: l });
      if (/^I: (Retrieving Release|Validating Packages|Installing core|Unpacking the base|Configuring the base|Base system installed)/.test(l))
        opts.onProgress?.(`debootstrap: ${l.slice(3)}`);
    });
    if (r.code !== 0) {
      throw new SwtError('IMAGE_UNAVAILABLE', `debootstrap ${opts.suite} failed (exit ${r.code}):\n${r.tail.slice(-10).join('\n')}`, {
        hint: 'needs root (or passwordless sudo), the debootstrap package and access to the Debian mirror (SWT_DEBIAN_MIRROR)',
      });
    }
    await unmountAll(root);
    await runTool('sh', ['-c', `rm -rf '${root}'/var/cache/apt/archives/*.deb '${root}'/var/lib/apt/lists/*`]);
    opts.onProgress?.(`importing the rootfs as ${name}`);
    const tar = spawn(...asRoot('tar', ['-C', root, '--numeric-owner', '-cf', '-', '.']), { stdio: ['ignore', 'pipe', 'pipe'] });
    let tarErr = '';
    tar.stderr.on('data', (c: Buffer) => (tarErr += c.toString('utf8')));
    const tarDone = new Promise<number>((res) => tar.on('close', (c) => res(c ?? 1)));
    const [repo, tag] = name.split(':') as [string, string];
    const stream = await docker.importImage(tar.stdout, {
      repo,
      tag,
      changes: [
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        'CMD ["/bin/bash"]',
        `LABEL ${IMAGE_LABELS.source}=debootstrap ${IMAGE_LABELS.ref}=debian:${opts.suite}`,
      ],
    } as object);
    await followProgress(docker, stream);
    const code = await tarDone;
    if (code !== 0) throw new SwtError('IMAGE_UNAVAILABLE', `packing the Debian rootfs failed: ${tarErr.trim().slice(-500)}`);
    opts.log?.info({ image: name, ms: Date.now() - started }, 'imported debootstrap rootfs');
    return name;
  } finally {
    await removeRootfsDir(dir);
  }
}
