/**
 * TEST HELPER. A Docker engine of the test's own, so that a fault test may restart it or fill its
 * disk without touching the machine's engine (which other tests and helpers share): dockerd on its
 * own socket, data root, exec root and pidfile, with no bridge and no iptables rules (sandbox
 * containers run with no network). Its data root can be a small tmpfs (a disk that fills up).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';

export interface PrivateDockerd {
  /** unix:///…/docker.sock, for DOCKER_HOST. */
  host: string;
  docker: Docker;
  /** Stops the engine (SIGTERM: its containers are killed), then starts it again after `downMs`. */
  restart(downMs?: number): Promise<void>;
  /** Copies images from the machine's engine into this one (docker save | docker load). */
  loadFrom(main: Docker, images: string[]): Promise<void>;
  stop(): Promise<void>;
}

/** True when this process may run a second dockerd (root, dockerd on PATH). */
export function canRunPrivateDockerd(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('dockerd', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function startPrivateDockerd(opts: { tmpfsBytes?: number } = {}): Promise<PrivateDockerd> {
  const root = mkdtempSync(join(tmpdir(), 'swt-dockerd-'));
  const data = join(root, 'data');
  mkdirSync(data);
  if (opts.tmpfsBytes) execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${opts.tmpfsBytes}`, 'swt-test-dockerd', data]);
  const sock = join(root, 'docker.sock');
  const docker = new Docker({ socketPath: sock });
  let proc: ChildProcess | undefined;
  let log = '';
  const launch = async () => {
    // Its own network namespace: dockerd with `--bridge none` deletes a `docker0` it can see, and
    // the machine's engine (shared by every other test) needs its docker0. unshare execs dockerd, same pid.
    proc = spawn('unshare', ['--net', '--', 'dockerd', '--host', `unix://${sock}`, '--data-root', data, '--exec-root', join(root, 'exec'), '--pidfile', join(root, 'docker.pid'), '--bridge', 'none', '--iptables=false', '--ip-masq=false', '--storage-driver', 'overlay2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d) => (log = (log + d.toString()).slice(-4000)));
    proc.stderr!.on('data', (d) => (log = (log + d.toString()).slice(-4000)));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (await docker.ping().then(() => true, () => false)) return;
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the private dockerd did not start: ${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const halt = async () => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(t);
  };
  await launch();
  return {
    host: `unix://${sock}`,
    docker,
    async restart(downMs = 1000) {
      await halt();
      await new Promise((r) => setTimeout(r, downMs));
      await launch();
    },
    async loadFrom(main, images) {
      for (const name of images) {
        const stream = await main.getImage(name).get();
        const res = await docker.loadImage(stream);
        await new Promise<void>((resolve, reject) => docker.modem.followProgress(res, (err: Error | null) => (err ? reject(err) : resolve())));
      }
    },
    async stop() {
      // Containers left by a failed test go with the engine.
      for (const c of await docker.listContainers({ all: true }).catch(() => [])) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
      await halt();
      if (opts.tmpfsBytes) execFileSync('umount', ['-l', data]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
