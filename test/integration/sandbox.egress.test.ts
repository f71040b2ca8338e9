import { connectDocker } from '../../src/sandbox/docker.js';
import { createDockerSandbox, ensureBaseImage, loadCaBundle } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, networksOfOurs, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { cleanupGitRepos, commitsMade, createGitRepo } from '../helpers/gitRepo.js';

// A malicious install script against a decoy server. The decoy is a container this test starts, on
// a network this test creates and on the default bridge, standing for the host, for cloud metadata
// and for a neighbouring container: before, an install on the default bridge could reach all three.
// Only the decoy's own addresses are ever aimed at.

const docker = connectDocker();
const tag = `swt-test-${process.pid}`;
let sandbox: Sandbox;
let decoy: { id: string; ips: string[] };
let decoyNet: string;
let pythonImage: string;

// dockerode hands TTY logs back parsed when they look like JSON (a bare status code).
const text = (x: unknown) => (Buffer.isBuffer(x) ? x.toString('utf8') : String(x));

async function runToEnd(image: string, cmd: string[], network: string): Promise<string> {
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

async function decoyLog(): Promise<string> {
  return text(await docker.getContainer(decoy.id).logs({ stdout: true, stderr: true }));
}

beforeAll(async () => {
  sandbox = createDockerSandbox();
  pythonImage = await ensureBaseImage('python:3.11', { docker, caBundle: await loadCaBundle() });
  const net = await docker.createNetwork({ Name: `${tag}-decoy`, Driver: 'bridge', Labels: { [tag]: '1' } });
  decoyNet = net.id;
  const c = await docker.createContainer({
    Image: pythonImage,
    Cmd: ['python3', '-u', '-m', 'http.server', '8080'],
    Entrypoint: [],
    Tty: true,
    Labels: { [tag]: '1' },
    HostConfig: { NetworkMode: net.id },
  });
  await c.start();
  // Also on the default bridge, where installs used to run: a neighbour there.
  await docker.getNetwork('bridge').connect({ Container: c.id });
  const nets = (await c.inspect()).NetworkSettings.Networks;
  const ownIp = Object.values(nets).find((n) => n.NetworkID === net.id)!.IPAddress;
  const bridgeIp = nets.bridge!.IPAddress;
  decoy = { id: c.id, ips: [ownIp, bridgeIp] };
  // The decoy answers where it should: from its own network and from the default bridge (any HTTP status will do).
  const probe = (ip: string, path: string) => [
    'python3',
    '-c',
    `import time, urllib.request as u, urllib.error as e
for i in range(40):
    try: print(u.urlopen("http://${ip}:8080${path}", timeout=5).status); break
    except e.HTTPError as x: print(x.code); break
    except Exception: time.sleep(0.25)`,
  ];
  const fromOwn = await runToEnd(pythonImage, probe(ownIp, '/control-own'), net.id);
  const fromBridge = await runToEnd(pythonImage, probe(bridgeIp, '/control-bridge'), 'bridge');
  expect([fromOwn.trim(), fromBridge.trim()]).toEqual(['404', '404']);
}, 600_000);

afterAll(async () => {
  if (decoy) await docker.getContainer(decoy.id).remove({ force: true });
  if (decoyNet) await docker.getNetwork(decoyNet).remove();
  await removeEnvImagesBuiltFrom(commitsMade());
  cleanupGitRepos();
  await removePackageCachesOfGoneRepos();
  expectNothingLeftBehind();
  expect(networksOfOurs()).toBe('');
});

const PROBE = `
const fs = require('fs'), net = require('net'), http = require('http'), dns = require('dns');
const decoys = JSON.parse(fs.readFileSync('decoys.json', 'utf8'));
const proxy = new URL(process.env.HTTP_PROXY || 'http://0.0.0.0:1');
const results = {};
const within = (p) => Promise.race([p, new Promise((r) => setTimeout(() => r('timeout'), 4000))]);
const tcp = (host, port) => new Promise((r) => {
  const s = net.connect({ host, port });
  s.on('connect', () => { s.destroy(); r('CONNECTED'); });
  s.on('error', (e) => r(e.code));
});
const viaProxy = (path) => new Promise((r) => {
  http.get({ host: proxy.hostname, port: proxy.port, path }, (res) => { res.resume(); r(res.statusCode); }).on('error', (e) => r(e.code));
});
const connect = (target) => new Promise((r) => {
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: target });
  req.on('connect', (res, sock) => { sock.destroy(); r(res.statusCode); });
  req.on('error', (e) => r(e.code));
  req.end();
});
(async () => {
  for (const ip of decoys) {
    results['direct ' + ip] = await within(tcp(ip, 8080));
    results['proxy GET ' + ip] = await within(viaProxy('http://' + ip + ':8080/steal'));
    results['proxy CONNECT ' + ip] = await within(connect(ip + ':8080'));
    results['proxy CONNECT ' + ip + ':443'] = await within(connect(ip + ':443'));
  }
  results['dns registry.npmjs.org'] = await within(new Promise((r) => dns.lookup('registry.npmjs.org', (e) => r(e ? e.code : 'RESOLVED'))));
  results['proxy GET not-allowed.invalid'] = await within(viaProxy('http://not-allowed.invalid/'));
  fs.writeFileSync('probe.json', JSON.stringify(results, null, 1));
})();
`;

describe('the install step behind the egress proxy (real containers)', () => {
  it('a malicious install script cannot reach the decoy (host, metadata or neighbour stand-in); the registry still works', async () => {
    const repo = createGitRepo({
      'package.json': JSON.stringify({ name: 'innocent', version: '1.0.0', private: true, scripts: { postinstall: 'node probe.js' }, dependencies: { 'is-number': '7.0.0' } }, null, 2) + '\n',
      'probe.js': PROBE,
      'decoys.json': JSON.stringify(decoy.ips),
    });
    const env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'node:22', install: 'npm install --no-audit --no-fund' });
    const r = await sandbox.run({ env, repo: repo.path, state: { rev: repo.sha, patches: [] }, command: "cat probe.json; echo; node -e \"console.log('is-number', require('is-number')(7))\"" });
    expect(r.exitCode).toBe(0);
    const probe = JSON.parse(r.output.slice(0, r.output.lastIndexOf('}') + 1)) as Record<string, string | number>;
    for (const ip of decoy.ips) {
      // No route out of the install network: only the proxy is on it.
      expect(['EHOSTUNREACH', 'ENETUNREACH', 'timeout']).toContain(probe[`direct ${ip}`]);
      // The proxy refuses every host not on the allowlist, by address or by port.
      expect(probe[`proxy GET ${ip}`]).toBe(403);
      expect(probe[`proxy CONNECT ${ip}`]).toBe(403);
      expect(probe[`proxy CONNECT ${ip}:443`]).toBe(403);
    }
    expect(probe['dns registry.npmjs.org']).not.toBe('RESOLVED');
    expect(probe['proxy GET not-allowed.invalid']).toBe(403);
    // The package came from registry.npmjs.org through the proxy.
    expect(r.output).toMatch(/^is-number true$/m);
    // The decoy saw the two control requests and nothing else.
    const requests = (await decoyLog()).split('\n').filter((l) => /"GET /.test(l));
    expect(requests).toHaveLength(2);
    expect(requests.join('\n')).not.toContain('/steal');
  });

  it('commits no proxy or cache variable into the environment image, and test runs see neither the proxy nor the cache', async () => {
    const repo = createGitRepo({ 'package.json': JSON.stringify({ name: 'p', version: '1.0.0', private: true }) + '\n' });
    const env = await sandbox.ensureEnvironment({ repo: repo.path, rev: repo.sha, baseImage: 'node:22', install: 'npm install --no-audit --no-fund && env | sort > .install-env' });
    const r = await sandbox.run({
      env,
      repo: repo.path,
      state: { rev: repo.sha, patches: [] },
      command: 'grep -c "^HTTPS_PROXY=http://" .install-env; grep -c "^npm_config_cache=/swt-cache/npm" .install-env; env | grep -ciE "proxy|swt-cache"; ls -A /swt-cache 2>/dev/null | wc -l',
    });
    // The install saw the proxy and the cache; the run sees no variable of either, and no cached package (at most the empty mount point).
    expect(r.output.trim().split('\n')).toEqual(['1', '1', '0', '0']);
  });
});
