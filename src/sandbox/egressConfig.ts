import { REGISTRIES } from '../ecosystems/registries.js';
import { SwtError } from '../util/errors.js';

/**
 * What an install step may reach: the package registries its package managers need, through an
 * egress proxy (tinyproxy) that denies every other host. Configured by the operator:
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

const HOST = /^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function parseEgressHosts(text: string, source = 'SWT_EGRESS_ALLOW'): string[] {
  const hosts = text
    .split(/[\s,]+/)
    .map((h) => h.trim().toLowerCase().replace(/\.$/, ''))
    .filter(Boolean);
  for (const h of hosts) {
    // An IP address or a bare TLD would open far more than a registry.
    if (!HOST.test(h) || /^[\d.]+$/.test(h) || !h.replace(/^\*\./, '').includes('.')) {
      throw new SwtError('BAD_CONFIG', `${source}: ${JSON.stringify(h)} is not a host name (use names like registry.example.com or *.example.com)`);
    }
  }
  return hosts;
}

export function parseUpstream(text: string): EgressSettings['upstream'] {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new SwtError('BAD_CONFIG', 'SWT_EGRESS_UPSTREAM must be a URL like http://proxy.example:3128');
  }
  if (url.protocol !== 'http:' || !url.hostname) throw new SwtError('BAD_CONFIG', 'SWT_EGRESS_UPSTREAM must be an http:// proxy URL with a host');
  const auth = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  return { host: url.hostname, port: Number(url.port || 80), ...(auth ? { auth } : {}) };
}

export function egressSettings(env: NodeJS.ProcessEnv = process.env): EgressSettings {
  const extra = env.SWT_EGRESS_ALLOW?.trim() ? parseEgressHosts(env.SWT_EGRESS_ALLOW) : [];
  const upstream = env.SWT_EGRESS_UPSTREAM?.trim() ? parseUpstream(env.SWT_EGRESS_UPSTREAM) : undefined;
  return { hosts: [...new Set([...DEFAULT_EGRESS_HOSTS, ...extra])], ...(upstream ? { upstream } : {}) };
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One extended regular expression per host, anchored: `a.b` is exactly a.b; `*.b` is b and below. */
export function filterLines(hosts: string[]): string[] {
  return hosts.map((h) => (h.startsWith('*.') ? `^(.+\\.)?${escapeRe(h.slice(2))}$` : `^${escapeRe(h)}$`));
}

/**
 * tinyproxy's configuration: default deny, a host filter, CONNECT to port 443 only, no Via header
 * (it would name the proxy), logs on stderr.
 */
export function tinyproxyConf(settings: EgressSettings, filterPath: string): string {
  const lines = [
    `Port ${PROXY_PORT}`,
    'Listen 0.0.0.0',
    'Timeout 600',
    'MaxClients 200',
    'LogLevel Info',
    'DisableViaHeader Yes',
    `Filter "${filterPath}"`,
    'FilterType ere',
    'FilterURLs Off',
    'FilterDefaultDeny Yes',
    'ConnectPort 443',
  ];
  const up = settings.upstream;
  if (up) lines.push(`Upstream http ${up.auth ? `${up.auth}@` : ''}${up.host}:${up.port}`);
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
