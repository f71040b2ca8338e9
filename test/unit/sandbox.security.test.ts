import { parseRepoConfig } from '../../src/config/repoConfig.js';
import { decideLimits } from '../../src/pipeline/context.js';
import { cappedLines, environmentLine, renderNotesMarkdown, renderNotesText } from '../../src/pipeline/notes.js';
import { capLimits, ceilingsFromEnv, clampLimits, DEFAULT_CEILINGS, describeCap } from '../../src/sandbox/containers/ceilings.js';
import { DEFAULT_EGRESS_HOSTS, egressSettings, filterLines, proxyEnv, squidConf } from '../../src/sandbox/egress/egressConfig.js';
import { envCacheSettings } from '../../src/sandbox/images/envCache.js';
import { installScript } from '../../src/sandbox/environments/environment.js';
import { SAVED_INSTALL_PARTS, SAVED_INSTALLS_KEPT, trackedList } from '../../src/sandbox/environments/savedInstall.js';
import { cacheEnv, cacheVolumeName } from '../../src/sandbox/environments/packageCache.js';
import { DEFAULT_LIMITS } from '../../src/sandbox/types.js';
import { isSwtError } from '../../src/util/errors.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

function errorOf(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('operator ceilings', () => {
  it('reads SWT_MAX_* and keeps defaults for the rest', () => {
    const c = ceilingsFromEnv({ SWT_MAX_TIMEOUT_SECONDS: '600', SWT_MAX_MEMORY_MIB: '4096', SWT_MAX_OUTPUT_BYTES: '131072', SWT_MAX_DISK_MIB: '2048' });
    expect(c).toEqual({ ...DEFAULT_CEILINGS, timeoutMs: 600_000, memoryBytes: 4 * GiB, outputBytes: 131072, diskBytes: 2 * GiB });
    expect(ceilingsFromEnv({})).toEqual(DEFAULT_CEILINGS);
    for (const bad of ['0', '-3', 'lots']) expect(isSwtError(errorOf(() => ceilingsFromEnv({ SWT_MAX_PIDS: bad })), 'BAD_CONFIG')).toBe(true);
  });
  it('lowers a request above a ceiling and says so; a lower one passes', () => {
    const ceilings = { ...DEFAULT_CEILINGS, timeoutMs: 1800_000, memoryBytes: 8 * GiB };
    const r = capLimits({ timeoutMs: 10 * 3600_000, memoryBytes: 64 * GiB, pids: 100 }, ceilings);
    expect(r.limits).toEqual({ timeoutMs: 1800_000, memoryBytes: 8 * GiB, pids: 100 });
    expect(r.capped.map(describeCap)).toEqual([
      'timeout 36000 s capped at 1800 s (SWT_MAX_TIMEOUT_SECONDS)',
      'memory 65536 MiB capped at 8192 MiB (SWT_MAX_MEMORY_MIB)',
    ]);
    expect(capLimits({ timeoutMs: 60_000 }, ceilings)).toEqual({ limits: { timeoutMs: 60_000 }, capped: [] });
    expect(clampLimits({ ...DEFAULT_LIMITS, cpus: 64 }, { ...DEFAULT_CEILINGS, cpus: 2 }).cpus).toBe(2);
  });
  it('a repository config asking for 10 hours and 64 GiB gets the ceilings, and the notes say so', () => {
    const config = parseRepoConfig('limits:\n  timeout_seconds: 36000\n  memory_mib: 65536\n  pids: 256\n  disk_mib: 1024\n  output_kib: 128\n');
    const d = decideLimits(config, {}, DEFAULT_CEILINGS);
    expect(d.limits).toEqual({ timeoutMs: 30 * 60_000, memoryBytes: 8 * GiB, pids: 256, diskBytes: 1024 * MiB, outputBytes: 128 * 1024 });
    expect(d.capped.map((c) => [c.limit, c.source])).toEqual([
      ['timeoutMs', '.github/swt.yml'],
      ['memoryBytes', '.github/swt.yml'],
    ]);
    expect(cappedLines(d.capped)).toEqual([
      '.github/swt.yml asked for timeout 36000 s capped at 1800 s (SWT_MAX_TIMEOUT_SECONDS)',
      '.github/swt.yml asked for memory 65536 MiB capped at 8192 MiB (SWT_MAX_MEMORY_MIB)',
    ]);
    // The caller's flags win over the config, and are capped the same way.
    const byCaller = decideLimits(config, { timeoutMs: 20 * 3600_000 }, DEFAULT_CEILINGS);
    expect(byCaller.capped.find((c) => c.limit === 'timeoutMs')).toMatchObject({ source: 'the caller', requested: 72000 });
  });
});

describe('egress allowlist', () => {
  it('defaults to the package registries and adds the operator’s hosts', () => {
    expect(egressSettings({}).hosts).toEqual([...DEFAULT_EGRESS_HOSTS]);
    const s = egressSettings({ SWT_EGRESS_ALLOW: 'npm.corp.example, *.pkg.corp.example', SWT_EGRESS_UPSTREAM: 'http://user:p%40ss@proxy.corp.example:3128' });
    expect(s.hosts.slice(-2)).toEqual(['npm.corp.example', '*.pkg.corp.example']);
    expect(s.upstream).toEqual({ host: 'proxy.corp.example', port: 3128, auth: 'user:p@ss' });
  });
  it('refuses addresses, bare names and URLs as hosts', () => {
    // Strings the parser must refuse; nothing here opens a connection.
    for (const bad of ['10.0.0.1', '169.254.169.254', 'localhost', 'com', 'https://registry.npmjs.org', 'a..b']) {
      const e = errorOf(() => egressSettings({ SWT_EGRESS_ALLOW: `npm.corp.example, ${bad}` }));
      expect(isSwtError(e, 'BAD_CONFIG')).toBe(true);
      expect((e as Error).message).toContain('SWT_EGRESS_ALLOW: ');
    }
    const e = errorOf(() => egressSettings({ SWT_EGRESS_UPSTREAM: 'socks5://x:1' }));
    expect(isSwtError(e, 'BAD_CONFIG')).toBe(true);
    expect((e as Error).message).toBe('SWT_EGRESS_UPSTREAM must be an http:// proxy URL with a host (value not shown)');
  });
  it('anchors every filter: a host exactly, a wildcard for the domain and below', () => {
    const lines = filterLines(['registry.npmjs.org', '*.corp.example']);
    expect(lines).toEqual(['^registry\\.npmjs\\.org$', '^(.+\\.)?corp\\.example$']);
    const re = lines.map((l) => new RegExp(l));
    const allowed = (h: string) => re.some((r) => r.test(h));
    expect(allowed('registry.npmjs.org')).toBe(true);
    expect(allowed('registry.npmjs.org.evil.example')).toBe(false);
    expect(allowed('evilregistry.npmjs.org')).toBe(false);
    expect(allowed('a.b.corp.example')).toBe(true);
    expect(allowed('corp.example')).toBe(true);
    expect(allowed('notcorp.example')).toBe(false);
  });
  it('configures squid to deny by default: allowed hosts only, CONNECT to 443, plain HTTP to 80/443 with GET or HEAD, no Via', () => {
    const conf = squidConf({ hosts: ['registry.npmjs.org', '*.corp.example'], upstream: { host: 'proxy.corp.example', port: 3128, auth: 'u:p' } }).split('\n');
    for (const line of [
      'acl tls_port port 443',
      'acl plain_ports port 80 443',
      'acl plain_methods method GET HEAD',
      'http_access deny CONNECT !tls_port',
      'http_access deny !CONNECT !plain_ports',
      'http_access deny !CONNECT !plain_methods',
      'acl allowed_hosts dstdom_regex -n -i ^registry\\.npmjs\\.org$ ^(.+\\.)?corp\\.example$',
      'via off',
      'forwarded_for delete',
      'cache_peer proxy.corp.example parent 3128 0 no-query no-digest default login=u:p',
      'never_direct allow all',
    ]) {
      expect(conf).toContain(line);
    }
    // Every allow comes after the denials, and the last word is a denial.
    expect(conf.filter((l) => l.startsWith('http_access')).slice(-2)).toEqual(['http_access allow allowed_hosts', 'http_access deny all']);
    const bare = squidConf({ hosts: [] });
    expect(bare).not.toContain('cache_peer');
    expect(bare).not.toContain('http_access allow');
  });
  it('points every package manager at the proxy, with no credentials', () => {
    // proxyEnv only formats variables; the address is what Docker gives a proxy on an install network.
    const env = proxyEnv('http://172.30.0.2:8888');
    for (const v of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'npm_config_https_proxy', 'npm_config_proxy', 'PIP_PROXY']) expect(env).toContain(`${v}=http://172.30.0.2:8888`);
    const cache = cacheEnv();
    for (const v of ['npm_config_cache=/swt-cache/npm', 'PIP_CACHE_DIR=/swt-cache/pip', 'YARN_CACHE_FOLDER=/swt-cache/yarn', 'npm_config_store_dir=/swt-cache/pnpm', 'COMPOSER_CACHE_DIR=/swt-cache/composer']) {
      expect(cache).toContain(v);
    }
    // Cached metadata is used without asking the registry again; Go reads the volume before the proxy.
    expect(cache).toContain('npm_config_prefer_offline=true');
    expect(cache.find((v) => v.startsWith('GOPROXY='))).toBe('GOPROXY=file:///swt-cache/go,https://proxy.golang.org,direct');
    // Only cache locations and switches: no proxy address, no credential.
    expect(cache.filter((v) => /^(https?_proxy|npm_config_(https_)?proxy|pip_proxy)$|token|password|auth/i.test(v.split('=')[0]!))).toEqual([]);
    expect(cacheVolumeName('/srv/repos/a')).toMatch(/^swt-pkg-cache-[0-9a-f]{16}$/);
    expect(cacheVolumeName('/srv/repos/a')).not.toBe(cacheVolumeName('/srv/repos/b'));
  });
});

describe('install script', () => {
  it('runs the install, then puts a patched state’s tracked files back', () => {
    expect(installScript("npm ci && echo 'ok'")).toBe("cd /testbed\nsh -c 'npm ci && echo '\\''ok'\\''' || exit $?");
    const s = installScript('npm install', { write: [{ path: 'package.json', mode: '100644', blob: 'b'.repeat(40) }], delete: ['src/new.js'], dirs: [], skipped: [] });
    expect(s.split('\n')).toEqual([
      'cd /testbed',
      "sh -c 'npm install' || exit $?",
      'cp -a /home/swt/.swt-restore/. /testbed/ || exit 70',
      'rm -rf /home/swt/.swt-restore',
      'rm -f -- /testbed/src/new.js 2>/dev/null || true',
    ]);
  });
  it('deletes the files the nearest layer holds and the revision does not before the install', () => {
    expect(installScript('pip install -r requirements.txt', undefined, undefined, ['old.py']).split('\n')).toEqual([
      'cd /testbed',
      "rm -f -- /testbed/old.py 2>/dev/null || true",
      "sh -c 'pip install -r requirements.txt' || exit $?",
    ]);
  });
  it('runs the ecosystem\'s step before the install (only when there is one) and its warm-up after, both quiet', () => {
    expect(installScript('cargo fetch', undefined, { before: 'seed', after: 'save' }).split('\n')).toEqual([
      'cd /testbed',
      "sh -c seed > /dev/null 2>&1 </dev/null || true",
      "sh -c 'cargo fetch' || exit $?",
      "sh -c save > /dev/null 2>&1 </dev/null || true",
    ]);
    expect(installScript('', undefined, { before: 'seed', after: 'save' }).split('\n')).toEqual(['cd /testbed', "sh -c '' || exit $?", "sh -c save > /dev/null 2>&1 </dev/null || true"]);
  });
  it('extracts a saved install of the key in place of the install, and saves one only after an install that ran', () => {
    const key = 'k'.repeat(64);
    const lines = installScript('npm ci', undefined, undefined, [], { key, extract: true }).split('\n');
    const saved = `"$SWT_PKG_CACHE/installs/${'k'.repeat(32)}"`;
    const extract = `[ -n "$SWT_PKG_CACHE" ] && swt_s=${saved} && { for i in 0 1 2 3; do [ -f "$swt_s/$i.tar" ] || swt_s=; done; [ -n "$swt_s" ] && [ -f "$swt_s/dirs" ]; } && (cd / && tr '\\n' '\\0' < "$swt_s/dirs" | xargs -0 -r mkdir -p --) && { swt_r=0; swt_ps=; for i in 0 1 2 3; do tar -C / --skip-old-files -xf "$swt_s/$i.tar" & swt_ps="$swt_ps $!"; done; for swt_p in $swt_ps; do wait "$swt_p" || swt_r=1; done; [ "$swt_r" = 0 ]; }`;
    expect(SAVED_INSTALL_PARTS).toBe(4);
    expect(lines[1]).toBe(`if ${extract}; then swt_restored=1; else sh -c 'npm ci' || exit $?; fi`);
    expect(lines[2]).toMatch(/^\{ \[ -z "\$\{swt_restored:-\}" \] && .*find testbed "\$\{HOME#\/\}" .* \| grep -vxF -f \/home\/swt\/\.swt-tracked > "\$swt_a\/all" .*tar -cf "\$swt_a\/\$i\.tar" -T "\$swt_a\/\$i\.list" & .*mv "\$swt_a" "\$swt_s"; .*\} > \/dev\/null 2>&1 <\/dev\/null \|\| true$/);
    expect(lines[2]).toContain(`tail -n +${SAVED_INSTALLS_KEPT + 1} | (cd "$swt_d" && xargs -r rm -rf)`);
    // A save cut off long ago leaves no folder behind for good.
    expect(lines[2]).toContain(`find "$swt_d" -maxdepth 1 -name '*.tmp' -mmin +120 -exec rm -rf {} +;`);
    // From a nearest layer: never extracted over another key's tree, still saved.
    expect(installScript('npm ci', undefined, undefined, [], { key, extract: false }).split('\n')[1]).toBe("sh -c 'npm ci' || exit $?");
    // Restore only (a build with no network): never the install; no saved install is exit 75.
    const only = installScript('npm ci', undefined, undefined, [], { key, extract: true, only: true }).split('\n');
    expect(only[1]).toBe(`if ${extract}; then swt_restored=1; else exit 75; fi`);
    expect(only.join('\n')).not.toContain('npm ci');
    expect(trackedList(['a.js', 'dir/b c.js', 'bad\nname']).toString()).toBe('testbed/a.js\ntestbed/dir/b c.js\nhome/swt/.swt-tracked\n');
  });
});

describe('environment cache settings', () => {
  it('reads the namespace, size and lease, and refuses nonsense', () => {
    expect(envCacheSettings({})).toEqual({ namespace: 'default', maxBytes: 20e9, leaseMs: 300_000 });
    expect(envCacheSettings({ SWT_ENV_CACHE_GB: '2.5', SWT_ENV_LEASE_SECONDS: '0', SWT_ENV_NAMESPACE: 'ci-1' })).toEqual({ namespace: 'ci-1', maxBytes: 2.5e9, leaseMs: 0 });
    expect(isSwtError(errorOf(() => envCacheSettings({ SWT_ENV_NAMESPACE: 'Bad Name' })), 'BAD_CONFIG')).toBe(true);
    expect(isSwtError(errorOf(() => envCacheSettings({ SWT_ENV_CACHE_GB: '0' })), 'BAD_CONFIG')).toBe(true);
  });
});

describe('notes under a verdict', () => {
  const env = { image: 'swt-env:a', baseImage: 'swt-base/node:22-x', cached: true, buildMs: 40 };
  it('says which environment each side used', () => {
    const shared = { ...env, base: env, head: { ...env, own: false, manifests: [] } };
    expect(environmentLine(shared)).toBe('environment: swt-env:a for base and head (cached)');
    const own = { ...env, base: env, head: { ...env, image: 'swt-env:b', cached: false, buildMs: 7400, own: true, manifests: ['package.json'] } };
    expect(environmentLine(own)).toBe('environment: base swt-env:a (cached); head swt-env:b (built in 7.4 s), its own because package.json changed');
    expect(renderNotesMarkdown({ environment: own, limitsCapped: [] })).toContain('head `swt-env:b`, its own because `package.json` changed');
  });
  it('lists every capped limit', () => {
    const capped = decideLimits(parseRepoConfig('limits: { timeout_seconds: 36000 }'), {}, DEFAULT_CEILINGS).capped;
    const env2 = { ...env, base: env, head: { ...env, own: false, manifests: [] } };
    expect(renderNotesText({ environment: env2, limitsCapped: capped })).toContain('limit capped: .github/swt.yml asked for timeout 36000 s capped at 1800 s (SWT_MAX_TIMEOUT_SECONDS)');
    expect(renderNotesMarkdown({ environment: env2, limitsCapped: capped })).toContain('⚠️ Limit capped');
  });
});
