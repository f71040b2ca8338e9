import { connectDocker } from '../../src/sandbox/docker.js';
import { ensureBaseImage, loadCaBundle } from '../../src/sandbox/index.js';

/**
 * A decoy HTTP server: a container this test process starts, on a network it creates (and, when
 * asked, on the default bridge too). Tests that prove a sandbox has no way out aim at the decoy's
 * addresses only, never at an address outside the machine. A control request from a container on
 * each of the decoy's networks shows it answers there, so a refused probe means isolation, not a
 * dead decoy.
 */
export interface Decoy {
  /** The decoy's address on each network it is on: its own first, then the default bridge's. */
  ips: string[];
  /** Port the decoy listens on, at every address. */
  port: number;
  /** The request lines the decoy has logged (the control requests included). */
  requests(): Promise<string[]>;
  stop(): Promise<void>;
}

const PORT = 8080;
const docker = connectDocker();
// dockerode hands TTY logs back parsed when they look like JSON (a bare status code).
const text = (x: unknown) => (Buffer.isBuffer(x) ? x.toString('utf8') : String(x));

async function runToEnd(image: string, cmd: string[], network: string, tag: string): Promise<string> {
  // A TTY: the logs come back as plain text, not multiplexed.
  const c = await docker.createContainer({ Image: image, Cmd: cmd, Entrypoint: [], Tty: true, Labels: { [tag]: '1' }, HostConfig: { NetworkMode: network } });
  try {
    await c.start();
    await c.wait();
    return text(await c.logs({ stdout: true, stderr: true }));
  } finally {
    await c.remove({ force: true });
  }
}

const controlProbe = (ip: string, path: string) => [
  'python3',
  '-c',
  `import time, urllib.request as u, urllib.error as e
for i in range(40):
    try: print(u.urlopen("http://${ip}:${PORT}${path}", timeout=5).status); break
    except e.HTTPError as x: print(x.code); break
    except Exception: time.sleep(0.25)`,
];

export async function startDecoy(opts: { alsoOnBridge?: boolean } = {}): Promise<Decoy> {
  const tag = `swt-test-${process.pid}`;
  const image = await ensureBaseImage('python:3.11', { docker, caBundle: await loadCaBundle() });
  const net = await docker.createNetwork({ Name: `${tag}-decoy-${Date.now()}`, Driver: 'bridge', Labels: { [tag]: '1' } });
  let id: string | undefined;
  const stop = async () => {
    if (id) await docker.getContainer(id).remove({ force: true });
    await net.remove();
  };
  try {
    const c = await docker.createContainer({
      Image: image,
      Cmd: ['python3', '-u', '-m', 'http.server', String(PORT)],
      Entrypoint: [],
      Tty: true,
      Labels: { [tag]: '1' },
      HostConfig: { NetworkMode: net.id },
    });
    id = c.id;
    await c.start();
    if (opts.alsoOnBridge) await docker.getNetwork('bridge').connect({ Container: c.id });
    const nets = (await c.inspect()).NetworkSettings.Networks;
    const targets: Array<[ip: string, network: string]> = [[Object.values(nets).find((n) => n.NetworkID === net.id)!.IPAddress, net.id]];
    if (opts.alsoOnBridge) targets.push([nets.bridge!.IPAddress, 'bridge']);
    // Any HTTP status shows the decoy answers on that network.
    for (const [ip, network] of targets) {
      const status = (await runToEnd(image, controlProbe(ip, `/control-${network === 'bridge' ? 'bridge' : 'own'}`), network, tag)).trim();
      if (status !== '404') throw new Error(`the decoy did not answer at ${ip} (got ${JSON.stringify(status)})`);
    }
    const requests = async () =>
      text(await docker.getContainer(c.id).logs({ stdout: true, stderr: true }))
        .split('\n')
        .filter((l) => /"[A-Z]+ /.test(l));
    return { ips: targets.map(([ip]) => ip), port: PORT, requests, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
