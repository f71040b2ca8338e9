/**
 * Which webhook bodies the receiver reads at once: decided on the declared length and the client's
 * address, before a byte is held, so that a stranger cannot fill the receiver.
 *
 * - A shared allowance (`bufferBytes`) bounds memory. Bodies declaring more than `smallBytes` may
 *   only take it while `reserveBytes` stays free: GitHub's usual deliveries (a few KiB, rarely over
 *   100 KiB) always find room, however many large bodies are open.
 * - Per client (an IPv4 address, or an IPv6 /64, which one host gets whole): at most `clientBodies`
 *   bodies and `clientBytes` in flight, so one address holds a bounded share of the pool and the reserve.
 * - A body that is *behind* (in flight for `STALL_GRACE_MS` and arrived slower than `MIN_BYTES_PER_S`)
 *   is evicted when a newcomer needs its room: a slow-loris body holds a slot only until someone
 *   else comes, never against a delivery that arrives at once.
 *
 * Why per-address limits do not starve GitHub: GitHub delivers from a few addresses, but sends each
 * body with its headers, so a delivery is in flight for milliseconds; even a burst of events rarely
 * has more than a couple being read at one instant from one address, far below `clientBodies`.
 * Attackers cannot send from GitHub's addresses over TCP (a handshake needs the return path), so the
 * per-client caps bind them and not GitHub. Behind a reverse proxy every request has the proxy's
 * address and the caps act on all clients together; then eviction of bodies that are behind is what
 * lets a delivery in (test/redteam/webhooks.receiverMemory.test.ts runs both). What no receiver can do alone is
 * outlast an attacker with many addresses that all send at the floor rate: that is a flood, for a
 * firewall that admits only GitHub's `hooks` ranges (api.github.com/meta).
 */

/** Bodies younger than this are never evicted: GitHub's arrive in far less. */
export const STALL_GRACE_MS = 1000;
/** After the grace, a body must have arrived at least this fast (on average) to keep its slot. */
export const MIN_BYTES_PER_S = 64 * 1024;

export interface BodyLimits {
  /** What all bodies being read at once may hold (SWT_WEBHOOK_BUFFER_MIB). */
  bufferBytes: number;
  /** Kept for bodies of at most `smallBytes` (SWT_WEBHOOK_RESERVE_MIB). */
  reserveBytes: number;
  /** SWT_WEBHOOK_SMALL_KIB. */
  smallBytes: number;
  /** Bodies one client may have in flight (SWT_WEBHOOK_CLIENT_BODIES). */
  clientBodies: number;
  /** Bytes one client's bodies may declare together (SWT_WEBHOOK_CLIENT_MIB). */
  clientBytes: number;
}

/** A body being read: what it declared, who sent it, how far it has come. */
export interface Body {
  readonly client: string;
  readonly length: number;
  readonly startedAt: number;
  received: number;
  /** Stops reading it and answers its client (called at most once, by the admission). */
  readonly evict: () => void;
}

export type Refusal = 'pool' | 'client';

/** The client a remote address counts as: IPv4 (also IPv4-mapped IPv6) whole, IPv6 by its /64. */
export function clientOf(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head, tail] = address.split('%')[0]!.toLowerCase().split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export class BodyAdmission {
  private readonly bodies = new Set<Body>();
  private total = 0;
  readonly limits: BodyLimits;
  private readonly now: () => number;

  constructor(limits: BodyLimits, now: () => number = () => performance.now()) {
    this.limits = limits;
    this.now = now;
  }

  /** Bytes the bodies being read have declared. */
  get reserved(): number {
    return this.total;
  }

  /** Whether a body of `length` from `client` could ever be read (an empty receiver would take it). */
  private couldFit(length: number): boolean {
    const l = this.limits;
    return length <= l.clientBytes && length <= l.bufferBytes - (length > l.smallBytes ? l.reserveBytes : 0);
  }

  /** What stands in the way of a body now, or null when it fits. */
  private blocker(client: string, length: number): Refusal | null {
    const l = this.limits;
    let count = 0;
    let bytes = 0;
    for (const b of this.bodies) if (b.client === client) (count++, (bytes += b.length));
    if (count >= l.clientBodies || bytes + length > l.clientBytes) return 'client';
    if (this.total + length > l.bufferBytes - (length > l.smallBytes ? l.reserveBytes : 0)) return 'pool';
    return null;
  }

  /** A body that has had its grace and came slower than the floor rate. */
  isBehind(b: Body, now = this.now()): boolean {
    const age = now - b.startedAt;
    return age >= STALL_GRACE_MS && b.received < Math.min(b.length, (age / 1000) * MIN_BYTES_PER_S);
  }

  /**
   * Takes a body in, evicting bodies that are behind (the oldest first; the client's own when its
   * caps are what stands in the way) until it fits; or says why it cannot.
   */
  admit(client: string, length: number, evict: () => void): Body | Refusal {
    if (!this.couldFit(length)) return length > this.limits.clientBytes ? 'client' : 'pool';
    for (let why = this.blocker(client, length); why; why = this.blocker(client, length)) {
      const now = this.now();
      let victim: Body | undefined;
      for (const b of this.bodies) {
        if ((why === 'client' && b.client !== client) || !this.isBehind(b, now)) continue;
        if (!victim || b.startedAt < victim.startedAt) victim = b;
      }
      if (!victim) return why;
      this.release(victim);
      victim.evict();
    }
    const body: Body = { client, length, startedAt: this.now(), received: 0, evict };
    this.bodies.add(body);
    this.total += length;
    return body;
  }

  /** The body is read, refused or gone: its room is free (a second call does nothing). */
  release(b: Body): void {
    if (this.bodies.delete(b)) this.total -= b.length;
  }
}
