/**
 * For the tests and bench:load: a real redis-server (Debian's) of their own on a free loopback
 * port, in a temp dir, set up as production should be: append-only file on, fsynced every second
 * (a restart, which flushes it, loses nothing; a crash at most the last second), noeviction.
 * Stopped and removed by stop().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  /** SHUTDOWN (the AOF is flushed) and start again on the same port; `downMs` in between. */
  restart(downMs?: number): Promise<void>;
  /** SIGKILL (up to the last second of writes may be lost, as with any `everysec` Redis), then start again after `downMs`. */
  crash(downMs?: number): Promise<void>;
  stop(): Promise<void>;
  /** The running server's pid (undefined while it is down). */
  pid(): number | undefined;
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    let buf = '';
    s.setTimeout(500, () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(false));
    s.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\r\n')) {
        s.destroy();
        resolve(buf.startsWith('+PONG'));
      }
    });
  });
}

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), `swt-redis-${process.pid}-`));
  let port = await freePort();
  let proc: ChildProcess | undefined;
  let log = '';

  // Ready means our own process says so, not just a PONG on the port: between freePort() and the
  // bind, another test's server may take the port, and its PONG would be taken for ours.
  const launchOnce = async (): Promise<'ready' | 'port taken'> => {
    log = '';
    proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--maxmemory-policy', 'noeviction', '--protected-mode', 'yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout!.on('data', (d) => (log = (log + d.toString()).slice(-4000)));
    proc.stderr!.on('data', (d) => (log = (log + d.toString()).slice(-4000)));
    const deadline = Date.now() + 10_000;
    while (!(log.includes('Ready to accept connections') && (await ping(port)))) {
      if (proc.exitCode !== null) {
        if (/Address already in use/i.test(log)) return 'port taken';
        throw new Error(`redis-server did not start: ${log}`);
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not start: ${log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return 'ready';
  };
  // A restart keeps its port (clients hold the URL): if someone took it meanwhile, that is an error.
  const launch = async (samePort = false) => {
    for (let tries = 0; ; tries++) {
      if ((await launchOnce()) === 'ready') return;
      if (samePort || tries >= 5) throw new Error(`redis-server could not bind 127.0.0.1:${port}: ${log}`);
      port = await freePort();
    }
  };

  const halt = async (signal: NodeJS.Signals) => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await exited;
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async restart(downMs = 500) {
      await halt('SIGTERM'); // redis-server shuts down cleanly on SIGTERM, flushing the AOF
      await new Promise((r) => setTimeout(r, downMs));
      await launch(true);
    },
    async crash(downMs = 500) {
      await halt('SIGKILL');
      await new Promise((r) => setTimeout(r, downMs));
      await launch(true);
    },
    pid: () => (proc && proc.exitCode === null ? proc.pid : undefined),
    async stop() {
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
