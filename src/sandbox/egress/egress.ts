import { randomBytes } from 'node:crypto';
import { SwtError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { ensureRootfs } from '../images/baseImages.js';
import { inspectImage, type Docker } from '../docker.js';
import { PROXY_PORT, PROXY_READY, proxyEnv, squidConf, type EgressSettings } from './egressConfig.js';
import { buildImageFromContext } from '../images/imageBuild.js';
import { DEBIAN_SUITE, egressProxyDockerfile, egressProxyImageName, IMAGE_LABELS } from '../images/imageRecipes.js';
import { containerLabels, lockedHostConfig } from '../containers/limits.js';
import { registerContainer, registerNetwork, removeContainer, removeNetwork, createTracked } from '../containers/liveContainers.js';
import { singleFlight, withFileLock } from '../../util/lock.js';

/**
 * The install step's only way out. Each install gets its own internal network (no gateway: the
 * bridge has no address, so neither the host, nor cloud metadata, nor any other container is
 * reachable, and names outside it do not resolve); the one other member is this process's egress
 * proxy, which also sits on its own bridge to the outside and lets through only allowed hosts.
 * The proxy lives while any install of the process runs and is removed after the last one.
 */

export interface InstallNetwork {
  /** Network name for the install container's NetworkMode. */
  network: string;
  /** Variables that point package managers at the proxy. */
  env: string[];
  proxyUrl: string;
}

interface Proxy {
  id: string;
  egressNetwork: string;
}

interface ProcessEgress {
  users: number;
  proxy?: Promise<Proxy>;
}

/** Per engine, per allowlist (two sandboxes in one process may allow different hosts). */
const state = new WeakMap<Docker, Map<string, ProcessEgress>>();
const LABEL_ROLE = 'swt-bot.role';

const suffix = () => `${process.pid}-${randomBytes(4).toString('hex')}`;

/** The proxy image, built once per machine from the debootstrap rootfs and Debian's squid. */
export async function ensureEgressImage(docker: Docker, log: Logger, onProgress?: (m: string) => void): Promise<string> {
  const name = egressProxyImageName();
  if (await inspectImage(docker, name)) return name;
  return singleFlight(`egress:${name}`, () =>
    withFileLock(`base-${name}`, async () => {
      if (await inspectImage(docker, name)) return name;
      const rootfs = await ensureRootfs(docker, DEBIAN_SUITE, { onProgress, logger: log }, log);
      onProgress?.(`building the egress proxy image ${name} (squid from Debian)`);
      await buildImageFromContext(docker, {
        tag: name,
        entries: [{ name: 'Dockerfile', content: egressProxyDockerfile(rootfs) }],
        labels: { [IMAGE_LABELS.source]: 'offline', [IMAGE_LABELS.ref]: 'egress-proxy' },
        onLine: (l) => log.debug({ image: name, build: l }),
      });
      return name;
    }),
  );
}

async function waitReady(docker: Docker, id: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = docker.getContainer(id);
    const logs = (await c.logs({ stdout: true, stderr: true })) as unknown as Buffer;
    if (logs.toString('utf8').includes(PROXY_READY)) return;
    const info = await c.inspect();
    if (!info.State.Running || Date.now() > deadline) {
      throw new SwtError('IMAGE_UNAVAILABLE', `the egress proxy did not start: ${logs.toString('utf8').replace(/[^\x20-\x7e\n]/g, '').trim().split('\n').slice(-5).join(' | ')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startProxy(docker: Docker, settings: EgressSettings, log: Logger, onProgress?: (m: string) => void): Promise<Proxy> {
  const image = await ensureEgressImage(docker, log, onProgress);
  const labels = { ...containerLabels('egress-proxy') };
  // Its own bridge to the outside, with no other member to reach (and inter-container traffic off).
  const net = await docker.createNetwork({
    Name: `swt-egress-${suffix()}`,
    Driver: 'bridge',
    Internal: false,
    EnableIPv6: false,
    CheckDuplicate: true,
    Labels: labels,
    Options: { 'com.docker.network.bridge.enable_icc': 'false' },
  });
  registerNetwork(docker, net.id);
  let id: string | undefined;
  try {
    const confPath = '/tmp/swt-egress.conf';
    const c = await createTracked(() => docker.createContainer({
      name: `swt-egress-proxy-${suffix()}`,
      Image: image,
      Entrypoint: [],
      // The configuration comes in variables and lands on the tmpfs: the root filesystem stays read-only.
      Cmd: ['sh', '-c', `printf '%s' "$SWT_PROXY_CONF" > ${confPath} && unset SWT_PROXY_CONF && exec squid -N -f ${confPath}`],
      Env: [`SWT_PROXY_CONF=${squidConf(settings)}`],
      User: '65534:65534',
      Labels: labels,
      HostConfig: {
        ...lockedHostConfig('egress-proxy', net.id),
        ReadonlyRootfs: true,
        Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=16m,mode=1777' },
        Memory: 256 * 1024 ** 2,
        MemorySwap: 256 * 1024 ** 2,
        PidsLimit: 64,
      },
    }));
    id = c.id;
    registerContainer(docker, c.id);
    await c.start();
    await waitReady(docker, c.id);
    log.debug({ proxy: c.id.slice(0, 12), hosts: settings.hosts }, 'egress proxy started');
    return { id: c.id, egressNetwork: net.id };
  } catch (e) {
    if (id) await removeContainer(docker, id).catch(() => undefined);
    await removeNetwork(docker, net.id).catch(() => undefined);
    throw e;
  }
}

async function stopProxy(docker: Docker, proxy: Proxy): Promise<void> {
  await removeContainer(docker, proxy.id).catch(() => undefined);
  await removeNetwork(docker, proxy.egressNetwork).catch(() => undefined);
}

/**
 * Runs fn with a fresh internal network whose only way out is the egress proxy, then removes the
 * network (and the proxy, when no other install of this process still needs it).
 */
export async function withInstallNetwork<T>(
  docker: Docker,
  settings: EgressSettings,
  log: Logger,
  fn: (net: InstallNetwork) => Promise<T>,
  onProgress?: (m: string) => void,
): Promise<T> {
  let byConfig = state.get(docker);
  if (!byConfig) state.set(docker, (byConfig = new Map()));
  const configKey = JSON.stringify(settings);
  let st = byConfig.get(configKey);
  if (!st) byConfig.set(configKey, (st = { users: 0 }));
  st.users++;
  try {
    const running = (st.proxy ??= startProxy(docker, settings, log, onProgress).catch((e) => {
      st!.proxy = undefined;
      throw e;
    }));
    const proxy = await running;
    const net = await docker.createNetwork({
      Name: `swt-install-${suffix()}`,
      Driver: 'bridge',
      Internal: true,
      EnableIPv6: false,
      CheckDuplicate: true,
      Labels: { ...containerLabels('install'), [LABEL_ROLE]: 'install-network' },
      // No address on the host's side of the bridge: the host is not reachable from the network.
      Options: { 'com.docker.network.bridge.inhibit_ipv4': 'true' },
    });
    registerNetwork(docker, net.id);
    try {
      await net.connect({ Container: proxy.id });
      const info = await docker.getContainer(proxy.id).inspect();
      const ip = Object.values(info.NetworkSettings.Networks).find((n) => n.NetworkID === net.id)?.IPAddress;
      if (!ip) throw new Error('the egress proxy got no address on the install network');
      const proxyUrl = `http://${ip}:${PROXY_PORT}`;
      return await fn({ network: net.id, env: proxyEnv(proxyUrl), proxyUrl });
    } finally {
      await net.disconnect({ Container: proxy.id, Force: true }).catch(() => undefined);
      await removeNetwork(docker, net.id).catch((e) => log.warn({ err: (e as Error).message }, 'removing the install network failed'));
    }
  } finally {
    st.users--;
    if (st.users === 0 && st.proxy) {
      const p = st.proxy;
      st.proxy = undefined;
      await p.then((proxy) => stopProxy(docker, proxy), () => undefined);
    }
  }
}
