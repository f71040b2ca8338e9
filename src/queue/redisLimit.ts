/**
 * A counting semaphore in Redis with leases that expire: at most `max` holders of a key at once,
 * across every worker. A holder is a job id, so a job resumed after its worker died takes its own
 * slot back at once; a slot whose worker vanished frees itself when its lease runs out.
 * (Open-source BullMQ has no groups; redis-semaphore's refresh timer rejects unhandled while Redis
 * is away, which would kill a worker during a Redis restart. This is the few lines it takes.)
 */
import type { Redis } from 'ioredis';

// KEYS[1] the holders (sorted set: holder → lease expiry, ms). Redis's clock, not the workers'.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
  return 1
end
return 0
`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
  return 1
end
return 0
`;

type LimitCommands = {
  swtLimitAcquire(key: string, holder: string, max: number, leaseMs: number): Promise<number>;
  swtLimitRenew(key: string, holder: string, leaseMs: number): Promise<number>;
};

export class RedisLimit {
  readonly #redis: Redis & LimitCommands;
  readonly #prefix: string;
  readonly #leaseMs: number;

  constructor(redis: Redis, opts: { prefix: string; leaseMs?: number }) {
    if (!('swtLimitAcquire' in redis)) {
      redis.defineCommand('swtLimitAcquire', { numberOfKeys: 1, lua: ACQUIRE });
      redis.defineCommand('swtLimitRenew', { numberOfKeys: 1, lua: RENEW });
    }
    this.#redis = redis as Redis & LimitCommands;
    this.#prefix = opts.prefix;
    this.#leaseMs = opts.leaseMs ?? 30_000;
  }

  get leaseMs(): number {
    return this.#leaseMs;
  }

  #key(key: string): string {
    return `${this.#prefix}:limit:${key}`;
  }

  /** Takes a slot of `key` for `holder` if fewer than `max` are taken (or the holder has one). */
  async tryAcquire(key: string, holder: string, max: number): Promise<boolean> {
    return (await this.#redis.swtLimitAcquire(this.#key(key), holder, Math.max(1, max), this.#leaseMs)) === 1;
  }

  /** Extends the holder's lease; false if it ran out meanwhile (someone else may have the slot). */
  async renew(key: string, holder: string): Promise<boolean> {
    return (await this.#redis.swtLimitRenew(this.#key(key), holder, this.#leaseMs)) === 1;
  }

  async release(key: string, holder: string): Promise<void> {
    await this.#redis.zrem(this.#key(key), holder);
  }

  /** Holders whose lease has not run out. */
  async holders(key: string): Promise<string[]> {
    const now = Date.now();
    const all = await this.#redis.zrange(this.#key(key), 0, -1, 'WITHSCORES');
    const out: string[] = [];
    for (let i = 0; i < all.length; i += 2) if (Number(all[i + 1]) > now) out.push(all[i]!);
    return out;
  }
}
