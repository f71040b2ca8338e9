/**
 * Redis connections for the queue, the store and the status page. Commands wait through a Redis
 * restart instead of failing (maxRetriesPerRequest: null, as BullMQ requires), reconnecting every
 * few hundred ms; connection errors are logged, never thrown at the process.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { SwtError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';

export function redisOptions(): RedisOptions {
  return {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(100 + times * 100, 1000),
    // A restarted Redis flushes loaded scripts; ioredis reloads them (EVALSHA → EVAL) by itself.
  };
}

/** A Redis connection from a redis:// or rediss:// URL; errors go to the log. */
export function connectRedis(url: string, logger?: Logger, name = 'swt'): Redis {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SwtError('BAD_CONFIG', 'REDIS_URL must be a URL such as redis://127.0.0.1:6379');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new SwtError('BAD_CONFIG', `REDIS_URL must start with redis:// or rediss://, got ${parsed.protocol}//`);
  const client = new Redis(url, { ...redisOptions(), connectionName: name });
  let lastLogged = 0;
  client.on('error', (e: Error) => {
    // One line every few seconds while Redis is away, not one per reconnect attempt.
    if (Date.now() - lastLogged < 5000) return;
    lastLogged = Date.now();
    logger?.warn({ err: e.message, redis: name }, 'Redis connection error; retrying');
  });
  return client;
}
