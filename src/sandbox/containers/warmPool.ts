import type { Docker } from '../docker.js';
import type { WaitingContainer } from './container.js';
import { closeStream } from './containerIo.js';
import type { Logger } from '../../util/logger.js';
import { removalsSettled, removeContainer, retireContainer } from './liveContainers.js';
import type { ResourceLimits } from '../types.js';

/**
 * Idle run containers started ahead for the environments in use, so that a run pays neither a
 * create nor a start (300–900 ms, most of a short test run). Each is attached and its process waits
 * for a first command (firstCommand.ts); it is taken by one run, gets that run's overlay and
 * command, and is removed after it: still a fresh container per run. Kept per
 * image and limits; a take (or a miss) asks for a refill, made once the sandbox has no run under
 * way, so the next validation of that environment finds them; idle ones go after `idleMs`.
 */

export interface WarmPoolSettings {
  /** Idle containers kept per environment image and limits (0: no pool). */
  size: number;
  /** An idle container is removed after this long unused. */
  idleMs: number;
}

interface Idle {
  waiting: WaitingContainer;
  timer: NodeJS.Timeout;
}

/** Creates, attaches and starts an idle container (its process only waits), registered for clean-up. */
type StartIdle = (image: string, limits: ResourceLimits) => Promise<WaitingContainer>;

export class WarmPool {
  private readonly idle = new Map<string, Idle[]>();
  private readonly wanted = new Map<string, { image: string; limits: ResourceLimits }>();
  private filling: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private drained = false;
  private readonly deps: { docker: Docker; log: Logger };
  private readonly settings: WarmPoolSettings;
  private readonly start: StartIdle;
  /** Whether a run is under way: refills wait for a quiet moment rather than slow it down. */
  private readonly busy: () => boolean;

  constructor(deps: { docker: Docker; log: Logger }, settings: WarmPoolSettings, start: StartIdle, busy: () => boolean) {
    this.deps = deps;
    this.settings = settings;
    this.start = start;
    this.busy = busy;
  }

  /** A started idle container of this image and these limits, now the caller's; undefined when none. Asks for a refill either way. */
  take(image: string, limits: ResourceLimits): WaitingContainer | undefined {
    if (this.drained || this.settings.size <= 0) return undefined;
    const key = JSON.stringify([image, limits]);
    this.wanted.set(key, { image, limits });
    this.schedule();
    const entry = this.idle.get(key)?.shift();
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    return entry.waiting;
  }

  /** Whether this container is one of the pool's idle ones. */
  holds(id: string): boolean {
    for (const list of this.idle.values()) if (list.some((e) => e.waiting.container.id === id)) return true;
    return false;
  }

  /** Resolves when the refills asked for so far are made and the used containers removed. */
  async settled(): Promise<void> {
    while (!this.drained && (this.timer || this.wanted.size)) await new Promise((r) => setTimeout(r, 50));
    await this.filling;
    await removalsSettled();
  }

  /** Removes every idle container; no refill after it. */
  async drain(): Promise<void> {
    this.drained = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.wanted.clear();
    await this.filling;
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    for (const e of all) {
      clearTimeout(e.timer);
      closeStream(e.waiting.attach);
    }
    await Promise.all(all.map((e) => removeContainer(this.deps.docker, e.waiting.container.id).catch(() => undefined)));
    await removalsSettled();
  }

  private schedule(): void {
    if (this.timer || this.drained) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.busy()) return this.schedule();
      this.filling = this.filling.then(() => this.fill());
    }, 200);
    this.timer.unref();
  }

  private async fill(): Promise<void> {
    const asked = [...this.wanted.entries()];
    this.wanted.clear();
    for (const [key, { image, limits }] of asked) {
      const list = this.idle.get(key) ?? [];
      this.idle.set(key, list);
      while (!this.drained && list.length < this.settings.size) {
        const waiting = await this.start(image, limits).catch((e: unknown) => {
          // An image evicted meanwhile, an engine in trouble: the runs start their own.
          this.deps.log.debug({ image, err: (e as Error).message }, 'warm pool: could not start an idle container');
          return undefined;
        });
        if (!waiting) break;
        if (this.drained) {
          closeStream(waiting.attach);
          await removeContainer(this.deps.docker, waiting.container.id).catch(() => undefined);
          break;
        }
        const entry: Idle = { waiting, timer: setTimeout(() => this.expire(key, entry), this.settings.idleMs) };
        entry.timer.unref();
        list.push(entry);
      }
    }
  }

  private expire(key: string, entry: Idle): void {
    const list = this.idle.get(key);
    if (!list?.includes(entry)) return;
    list.splice(list.indexOf(entry), 1);
    closeStream(entry.waiting.attach);
    retireContainer(this.deps.docker, entry.waiting.container.id);
  }
}
