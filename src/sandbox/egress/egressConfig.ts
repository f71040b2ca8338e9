import { REGISTRIES } from '../../ecosystems/registries.js';
import { envValues, type Environment } from '../../settings/index.js';

/**
 * What an install step may reach: the package registries its package managers need, through an
 * egress proxy (Debian's squid) that denies every other host, every port but 443 (CONNECT) and
 * 80/443 (plain HTTP), and every method but GET, HEAD and CONNECT. Configured by the operator:
 * SWT_EGRESS_ALLOW adds hosts (a private registry; `*.corp.example` for a domain and its
 * subdomains), SWT_EGRESS_UPSTREAM sends the allowed traffic on through a corporate proxy. Pure.
 */

/** Every ecosystem's registries (src/ecosystems/registries.ts), and Debian's mirrors for image builds. */
export const DEFAULT_EGRESS_HOSTS: readonly string[] = [...new Set([...Object.values(REGISTRIES).flat(), 'deb.debian.org', 'security.debian.org'])];

export const PROXY_PORT = 8888;

export interface EgressSettings {
  /** Host names (or `*.domain`) the proxy lets through; nothing else. */
  hosts: string[];
  /** A proxy the allowed traffic goes through (`http://[user:password@]host:port`). */
  upstream?: { host: string; port: number; auth?: string };
}

/** SWT_EGRESS_ALLOW's hosts and SWT_EGRESS_UPSTREAM's proxy, as settings/ parsed them. */
export function egressSettings(env?: Environment): EgressSettings {
  const e = envValues(env);
  return { hosts: [...new Set([...DEFAULT_EGRESS_HOSTS, ...e.SWT_EGRESS_ALLOW])], ...(e.SWT_EGRESS_UPSTREAM ? { upstream: e.SWT_EGRESS_UPSTREAM } : {}) };
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One extended regular expression per host, anchored: `a.b` is exactly a.b; `*.b` is b and below. */
export function filterLines(hosts: string[]): string[] {
  return hosts.map((h) => (h.startsWith('*.') ? `^(.+\\.)?${escapeRe(h.slice(2))}$` : `^${escapeRe(h)}$`));
}

/** Ports a request may name: CONNECT only to 443; a plain HTTP request to 80 or 443. */
export const CONNECT_PORTS = [443] as const;
export const PLAIN_PORTS = [80, 443] as const;
/**
 * Methods of a plain HTTP request. The registry clients (npm, pip, yarn, pnpm, go, cargo, maven)
 * download with GET and HEAD; their one POST (npm audit) and publishing (PUT) go over HTTPS, in a
 * CONNECT tunnel the proxy does not open.
 */
export const PLAIN_METHODS = ['GET', 'HEAD'] as const;

/** Marks a started proxy in its log. */
export const PROXY_READY = 'Accepting HTTP Socket connections';

/**
 * squid's configuration: the allowed hosts (anchored, no DNS lookup of an address), the ports and
 * methods above, everything else denied; no cache, no Via or X-Forwarded-For (they would name the
 * proxy and the install), no version in error pages, logs on stdout/stderr, nothing written to disk.
 */
export function squidConf(settings: EgressSettings): string {
  const lines = [
    `http_port ${PROXY_PORT}`,
    'pid_filename none',
    'cache deny all',
    'cache_mem 0',
    'access_log stdio:/dev/stdout',
    'cache_log stdio:/dev/stderr',
    'cache_store_log none',
    'logfile_rotate 0',
    'coredump_dir /tmp',
    'pinger_enable off',
    // squid sizes its tables by the descriptors it may open: the engine's default (a million) would not fit in 256 MiB.
    'max_filedescriptors 4096',
    'shutdown_lifetime 0 seconds',
    'visible_hostname swt-egress',
    'via off',
    'forwarded_for delete',
    'httpd_suppress_version_string on',
    `acl tls_port port ${CONNECT_PORTS.join(' ')}`,
    `acl plain_ports port ${PLAIN_PORTS.join(' ')}`,
    'acl CONNECT method CONNECT',
    `acl plain_methods method ${PLAIN_METHODS.join(' ')}`,
    'http_access deny CONNECT !tls_port',
    'http_access deny !CONNECT !plain_ports',
    'http_access deny !CONNECT !plain_methods',
  ];
  if (settings.hosts.length) {
    lines.push(`acl allowed_hosts dstdom_regex -n -i ${filterLines(settings.hosts).join(' ')}`, 'http_access allow allowed_hosts');
  }
  lines.push('http_access deny all');
  const up = settings.upstream;
  if (up) lines.push(`cache_peer ${up.host} parent ${up.port} 0 no-query no-digest default${up.auth ? ` login=${up.auth}` : ''}`, 'never_direct allow all');
  return `${lines.join('\n')}\n`;
}

/** The variables that send an install's package managers through the proxy (no credentials in them). */
export function proxyEnv(proxyUrl: string): string[] {
  const vars: Record<string, string> = {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    NO_PROXY: 'localhost,127.0.0.1',
    no_proxy: 'localhost,127.0.0.1',
    npm_config_proxy: proxyUrl,
    npm_config_https_proxy: proxyUrl,
    PIP_PROXY: proxyUrl,
  };
  return Object.entries(vars).map(([k, v]) => `${k}=${v}`);
}
