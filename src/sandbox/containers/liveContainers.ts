import { hostname } from 'node:os';
import { logger } from '../../util/logger.js';
import { isNotFound, type Docker } from '../docker.js';
import { LABEL } from './limits.js';
import { OWN_START_TICKS, ownerGone } from '../../util/processes.js';

/**
 * Every container (and network) this process creates is registered here until it is removed. One
 * process-level SIGINT/SIGTERM handler force-removes them all, then exits with 130/143. Containers
 * and networks left behind by a process that died (SIGKILL) are reaped by the next sandbox on the
 * same host.
 */

const live = new Map<string, Docker>();
const liveNetworks = new Map<string, Docker>();
/** The engines this process made containers on: swept for its own labels at a signal. */
const engines = new Set<Docker>();
/** Removals of what was registered after a signal (a create that was in flight): awaited before the exit. */
const late: Array<Promise<void>> = [];
let handlersInstalled = false;
let exiting = false;

/** True once a SIGINT/SIGTERM started removing everything: results from then on are not real. */
export function interrupted(): boolean {
  return exiting;
}

/**
 * After a signal, work in flight must not report results from containers that were removed under
 * it, nor crash the process (exit 1) before the handler exits with 130/143: it waits for the exit.
 */
export function haltIfInterrupted(): Promise<void> {
  return exiting ? new Promise<void>(() => {}) : Promise.resolve();
}

/** Container creates sent to the engine and not yet answered: a signal waits for them before its sweep. */
const creating = new Set<Promise<unknown>>();

/**
 * Creates a container so that a signal cannot miss it: none is sent after a signal, and one in
 * flight lands before the signal's sweep of this process's labels (else it outlived the exit).
 */
export async function createTracked<T>(create: () => Promise<T>): Promise<T> {
  await haltIfInterrupted();
  const p = create();
  creating.add(p);
  const done = () => void creating.delete(p);
  p.then(done, done);
  return p;
}

/** What ends work that would hold a removal up (a copy into a container): run first at a signal. */
const stoppers = new Set<() => void>();

/** Runs `stop` at a SIGINT/SIGTERM, before the containers are removed; the returned function unregisters it. */
export function onInterrupt(stop: () => void): () => void {
  stoppers.add(stop);
  return () => stoppers.delete(stop);
}

export function liveContainerIds(): string[] {
  return [...live.keys()];
}

/**
 * Removes one container or network of the engine: gone already, or (`done`) being removed by
 * someone else, counts as removed; any other failure is tried again (5 attempts, 250 ms longer
 * each time), then logged and thrown.
 */
async function removeWithRetries(kind: 'container' | 'network', id: string, remove: () => Promise<unknown>, done: (message: string) => boolean = () => false): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await remove();
      return;
    } catch (e) {
      const msg = (e as Error).message ?? '';
      if (isNotFound(e) || done(msg)) return;
      if (attempt >= 4) {
        logger.warn({ [kind]: id, err: msg }, `could not remove sandbox ${kind}`);
        throw e;
      }
      await new Promise((r) => setTimeout(r, 250 * (attempt + 1)));
    }
  }
}

export async function removeContainer(docker: Docker, id: string): Promise<void> {
  // "removal already in progress" means someone else (the signal handler, a pool's drain) is on
  // it: wait until it is gone, so that a process exiting after this call leaves nothing half-removed.
  let elsewhere = false;
  await removeWithRetries('container', id, () => docker.getContainer(id).remove({ force: true, v: true }), (msg) => (elsewhere = /already in progress/.test(msg)));
  if (elsewhere) await goneWithin(docker, id, 15_000);
  live.delete(id);
}

/** Removals going on off their caller's path: `removalsSettled()` waits for them. */
const retiring = new Set<Promise<unknown>>();

/** Tracks a removal (and what follows it) that its caller does not wait for. */
export function inBackground(removal: Promise<unknown>): void {
  const tracked: Promise<unknown> = removal.catch(() => undefined).finally(() => retiring.delete(tracked));
  retiring.add(tracked);
}

/**
 * Removes a container in the background: its caller is done with it and need not wait (deleting a
 * large writable layer takes the engine ~0.6 s). It stays registered, so a signal still removes it.
 */
export function retireContainer(docker: Docker, id: string): void {
  inBackground(removeContainer(docker, id).catch((e) => logger.warn({ container: id, err: (e as Error).message }, 'removing a used container failed')));
}

/** Resolves once every background removal started so far (and any started meanwhile) is done. */
export async function removalsSettled(): Promise<void> {
  while (retiring.size) await Promise.allSettled([...retiring]);
}

async function goneWithin(docker: Docker, id: string, ms: number): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const there = await docker.getContainer(id).inspect().then(() => true, (e: unknown) => !isNotFound(e));
    if (!there) return;
  }
}

export function registerNetwork(docker: Docker, id: string): void {
  installSignalHandlers();
  engines.add(docker);
  if (exiting) late.push(removeNetwork(docker, id).catch(() => undefined));
  else liveNetworks.set(id, docker);
}

/** Removes a network (its containers must be gone or disconnected first: "has active endpoints" while one is torn down is tried again). */
export async function removeNetwork(docker: Docker, id: string): Promise<void> {
  await removeWithRetries('network', id, () => docker.getNetwork(id).remove());
  liveNetworks.delete(id);
}

export async function removeAllLive(): Promise<void> {
  await Promise.allSettled([...live.entries()].map(([id, docker]) => removeContainer(docker, id)));
  await Promise.allSettled([...liveNetworks.entries()].map(([id, docker]) => removeNetwork(docker, id)));
}

/**
 * Containers and networks of this very process (pid, host and start time in their labels) that no
 * registry holds: a create that finished while the handler was removing the others.
 */
async function sweepOwn(): Promise<void> {
  const own = [`${LABEL}.pid=${process.pid}`, `${LABEL}.host=${hostname()}`, ...(OWN_START_TICKS ? [`${LABEL}.started=${OWN_START_TICKS}`] : [])];
  for (const docker of engines) {
    const containers = await docker.listContainers({ all: true, filters: { label: own } }).catch(() => []);
    await Promise.allSettled(containers.map((c) => removeContainer(docker, c.Id)));
    const networks = await docker.listNetworks({ filters: { label: own } }).catch(() => []);
    await Promise.allSettled(networks.map((n) => removeNetwork(docker, n.Id)));
  }
}

function onSignal(signal: NodeJS.Signals, code: number): void {
  if (exiting) return;
  exiting = true;
  const timer = setTimeout(() => process.exit(code), 10_000);
  timer.unref();
  // A container that is being copied into is not removed until the copy ends: end the copies first.
  for (const stop of stoppers) stop();
  removeAllLive()
    .then(() => Promise.allSettled([...creating]))
    .then(() => Promise.allSettled(late))
    .then(() => sweepOwn())
    .finally(() => process.exit(code));
  void signal;
}

export function installSignalHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once('SIGINT', () => onSignal('SIGINT', 130));
  process.once('SIGTERM', () => onSignal('SIGTERM', 143));
}

export function registerContainer(docker: Docker, id: string): void {
  installSignalHandlers();
  engines.add(docker);
  if (exiting) late.push(removeContainer(docker, id).catch(() => undefined));
  else live.set(id, docker);
}

export function unregisterContainer(id: string): void {
  live.delete(id);
}

function ownerDead(labels: Record<string, string> | undefined): boolean {
  const pid = Number(labels?.[`${LABEL}.pid`]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const started = labels?.[`${LABEL}.started`];
  // Our own pid with another start time: a restarted worker (pid 1 in its container again).
  if (pid === process.pid) return started !== undefined && started !== OWN_START_TICKS;
  return ownerGone(pid, started);
}

/** Removes sandbox containers, then networks, of dead processes on this host; returns how many. */
export async function reapOrphans(docker: Docker): Promise<number> {
  const host = hostname();
  const filters = { label: [LABEL, `${LABEL}.host=${host}`] };
  const list = await docker.listContainers({ all: true, filters });
  let n = 0;
  for (const c of list) {
    if (!ownerDead(c.Labels)) continue;
    await removeContainer(docker, c.Id).catch(() => undefined);
    n++;
  }
  for (const net of await docker.listNetworks({ filters })) {
    if (!ownerDead(net.Labels)) continue;
    await removeNetwork(docker, net.Id).catch(() => undefined);
    n++;
  }
  if (n) logger.info({ removed: n }, 'removed sandbox containers and networks left by dead processes');
  return n;
}
