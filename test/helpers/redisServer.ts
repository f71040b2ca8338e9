/** TEST HELPER. The tests' own redis-server: the one bench:load starts too. */
export { freePort, startRedis, type RedisServer } from '../../src/bench/redisServer.js';
