import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { expectNothingLeftBehind, networksOfOurs, removeEnvImagesBuiltFrom, removePackageCachesOfGoneRepos } from '../helpers/docker.js';
import { startDecoy, type Decoy } from '../helpers/decoy.js';
import { cleanupGitRepos, commitsMade, createGitRepo } from '../helpers/gitRepo.js';

// A malicious install script against a decoy server. The decoy is a container this test starts, on
// a network this test creates and on the default bridge, standing for the host, for cloud metadata
// and for a neighbouring container: before, an install on the default bridge could reach all three.
// Only the decoy's own addresses are ever aimed at.

let sandbox: Sandbox;
let decoy: Decoy;

beforeAll(async () => {
  sandbox = createDockerSandbox();
  // Also on the default bridge, where installs used to run: a neighbour there.
  decoy = await startDecoy({ alsoOnBridge: true });
}, 600_000);

afterAll(async () => {
  if (decoy) await decoy.stop();
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
  // A name that exists nowhere (RFC 2606), so even a leak would ask about nothing real.
  results['dns exfil.decoy.invalid'] = await within(new Promise((r) => dns.lookup('exfil.decoy.invalid', (e) => r(e ? e.code : 'RESOLVED'))));
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
    // No resolver answers at all (an answer, even NXDOMAIN, would mean DNS leaves the network).
    expect(['EAI_AGAIN', 'timeout']).toContain(probe['dns exfil.decoy.invalid']);
    expect(probe['proxy GET not-allowed.invalid']).toBe(403);
    // The package came from registry.npmjs.org through the proxy.
    expect(r.output).toMatch(/^is-number true$/m);
    // The decoy saw the two control requests and nothing else.
    const requests = await decoy.requests();
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
