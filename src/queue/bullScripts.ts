/**
 * The Lua scripts that change a BullJobQueue's job records (bullQueue.ts says what each record
 * keeps), as ioredis commands, and a record as a JobRecord. Each script runs atomically on the
 * one Redis server; keys are built from the prefix in ARGV[1].
 */
import type { Redis } from 'ioredis';
import type { JobRecord, JobState } from './queue.js';

const COMMON = `
local p = ARGV[1]
local function jobKey(id) return p .. ':job:' .. id end
local function move(id, from, to)
  redis.call('SREM', p .. ':state:' .. from, id)
  redis.call('SADD', p .. ':state:' .. to, id)
end
local function closeOpen(id)
  local kind = redis.call('HGET', jobKey(id), 'bull_kind')
  if not kind or kind == '' then kind = redis.call('HGET', jobKey(id), 'kind') end
  local grp = redis.call('HGET', jobKey(id), 'grp')
  redis.call('SREM', p .. ':open:' .. kind, id)
  if grp and grp ~= '' then redis.call('SREM', p .. ':grp:' .. grp, id) end
end
local function cancelGroup(grp, except, now, below)
  local out = {}
  for _, id in ipairs(redis.call('SMEMBERS', p .. ':grp:' .. grp)) do
    if id ~= except and (not below or tonumber(id) < below) then
      local st = redis.call('HGET', jobKey(id), 'state')
      if st == 'queued' then
        redis.call('HSET', jobKey(id), 'state', 'cancelled', 'error', 'superseded', 'updated_at', now)
        move(id, 'queued', 'cancelled')
        closeOpen(id)
        table.insert(out, 'q' .. id)
      elseif st == 'running' then
        redis.call('HSET', jobKey(id), 'cancel', '1', 'updated_at', now)
        redis.call('PUBLISH', p .. ':cancel', id)
        table.insert(out, 'r' .. id)
      else
        redis.call('SREM', p .. ':grp:' .. grp, id)
      end
    end
  end
  return out
end
`;

// ARGV: prefix, key, kind, payload, group, maxAttempts, runAt, now, priority, limitKey, limitMax
const ENQUEUE = `${COMMON}
local key, kind, grp, now = ARGV[2], ARGV[3], ARGV[5], ARGV[8]
if key ~= '' then
  local existing = redis.call('GET', p .. ':key:' .. key)
  if existing then return {existing, 0} end
end
local id = tostring(redis.call('INCR', p .. ':seq'))
redis.call('HSET', jobKey(id), 'id', id, 'kind', kind, 'payload', ARGV[4], 'key', key, 'grp', grp, 'state', 'queued',
  'attempts', 0, 'max_attempts', ARGV[6], 'recoveries', 0, 'run_at', ARGV[7], 'owner', '', 'cancel', 0, 'error', '',
  'created_at', now, 'updated_at', now, 'priority', ARGV[9], 'limit_key', ARGV[10], 'limit_max', ARGV[11])
if key ~= '' then redis.call('SET', p .. ':key:' .. key, id) end
redis.call('ZADD', p .. ':jobs', id, id)
redis.call('SADD', p .. ':open:' .. kind, id)
redis.call('SADD', p .. ':state:queued', id)
local res = {id, 1}
if grp ~= '' then
  for _, s in ipairs(cancelGroup(grp, id, now)) do table.insert(res, s) end
  redis.call('SADD', p .. ':grp:' .. grp, id)
end
return res
`;

// ARGV: prefix, id, kind, payload, key, group, now. A running job becomes its work (JobQueue.become):
// it takes the key unless another job holds it, and supersedes the group's older jobs only.
const BECOME = `${COMMON}
local id, kind, key, grp, now = ARGV[2], ARGV[3], ARGV[5], ARGV[6], ARGV[7]
local k = jobKey(id)
if key ~= '' then
  local holder = redis.call('GET', p .. ':key:' .. key)
  if holder and holder ~= id then return {'taken'} end
  redis.call('SET', p .. ':key:' .. key, id)
  redis.call('HSET', k, 'work_key', key)
end
-- Its BullMQ job stays in the queue of the kind it was enqueued as, and so does its open-set entry:
-- that kind's workers (which run the same handler) retry or resume it, and the reconciler finds it there.
redis.call('HSETNX', k, 'bull_kind', redis.call('HGET', k, 'kind'))
redis.call('HSET', k, 'kind', kind, 'payload', ARGV[4], 'updated_at', now)
local res = {'ok'}
if grp ~= '' then
  for _, s in ipairs(cancelGroup(grp, id, now, tonumber(id))) do table.insert(res, s) end
  redis.call('HSET', k, 'grp', grp)
  redis.call('SADD', p .. ':grp:' .. grp, id)
end
return res
`;

// ARGV: prefix, group, now
const CANCEL_GROUP = `${COMMON}
return cancelGroup(ARGV[2], '', ARGV[3])
`;

// ARGV: prefix, id, owner, now, maxRecoveries
const CLAIM = `${COMMON}
local id, owner, now = ARGV[2], ARGV[3], ARGV[4]
local k = jobKey(id)
local st = redis.call('HGET', k, 'state')
if not st then return {'missing'} end
if st ~= 'queued' and st ~= 'running' then return {'skip', st} end
if redis.call('HGET', k, 'cancel') == '1' then
  redis.call('HSET', k, 'state', 'cancelled', 'error', 'superseded', 'owner', '', 'updated_at', now)
  move(id, st, 'cancelled')
  closeOpen(id)
  return {'cancelled'}
end
if st == 'running' then
  local rec = redis.call('HINCRBY', k, 'recoveries', 1)
  if rec > tonumber(ARGV[5]) then
    local msg = 'its process died ' .. rec .. ' times while running it'
    redis.call('HSET', k, 'state', 'failed', 'error', msg, 'owner', '', 'updated_at', now)
    move(id, 'running', 'failed')
    closeOpen(id)
    return {'failed', msg}
  end
  redis.call('HSET', k, 'owner', owner, 'updated_at', now)
  return {'run', redis.call('HGET', k, 'attempts'), 'recovered'}
end
local attempts = redis.call('HINCRBY', k, 'attempts', 1)
redis.call('HSET', k, 'state', 'running', 'owner', owner, 'updated_at', now)
move(id, 'queued', 'running')
return {'run', tostring(attempts)}
`;

// ARGV: prefix, id, owner, state, error, runAt, now. Only the owner may finish its job.
const FINISH = `${COMMON}
local id, to = ARGV[2], ARGV[4]
local k = jobKey(id)
if redis.call('HGET', k, 'owner') ~= ARGV[3] then return 0 end
local st = redis.call('HGET', k, 'state')
redis.call('HSET', k, 'state', to, 'error', ARGV[5], 'owner', '', 'updated_at', ARGV[7])
if ARGV[6] ~= '' then redis.call('HSET', k, 'run_at', ARGV[6]) end
move(id, st, to)
if to ~= 'queued' then closeOpen(id) end
return 1
`;

// ARGV: prefix, cutoff, batch. The oldest `batch` jobs are looked at; finished ones unchanged
// since the cutoff go, with their key (unless a newer job took it) and their set memberships.
const PRUNE = `${COMMON}
local cutoff, n = tonumber(ARGV[2]), 0
for _, id in ipairs(redis.call('ZRANGE', p .. ':jobs', 0, tonumber(ARGV[3]) - 1)) do
  local k = jobKey(id)
  local st, key, grp, at, wk = unpack(redis.call('HMGET', k, 'state', 'key', 'grp', 'updated_at', 'work_key'))
  if not st or ((st == 'done' or st == 'failed' or st == 'cancelled') and tonumber(at) < cutoff) then
    if key and key ~= '' and redis.call('GET', p .. ':key:' .. key) == id then redis.call('DEL', p .. ':key:' .. key) end
    if wk and wk ~= '' and redis.call('GET', p .. ':key:' .. wk) == id then redis.call('DEL', p .. ':key:' .. wk) end
    if st then redis.call('SREM', p .. ':state:' .. st, id) end
    if grp and grp ~= '' then redis.call('SREM', p .. ':grp:' .. grp, id) end
    redis.call('ZREM', p .. ':jobs', id)
    redis.call('DEL', k)
    n = n + 1
  end
end
return n
`;

export type Commands = {
  swtEnqueue(...args: string[]): Promise<string[]>;
  swtCancelGroup(...args: string[]): Promise<string[]>;
  swtBecome(...args: string[]): Promise<string[]>;
  swtClaim(...args: string[]): Promise<string[]>;
  swtFinish(...args: string[]): Promise<number>;
  swtPrune(...args: string[]): Promise<number>;
};

export function defineCommands(redis: Redis): Redis & Commands {
  if (!('swtEnqueue' in redis)) {
    redis.defineCommand('swtEnqueue', { numberOfKeys: 0, lua: ENQUEUE });
    redis.defineCommand('swtCancelGroup', { numberOfKeys: 0, lua: CANCEL_GROUP });
    redis.defineCommand('swtBecome', { numberOfKeys: 0, lua: BECOME });
    redis.defineCommand('swtClaim', { numberOfKeys: 0, lua: CLAIM });
    redis.defineCommand('swtFinish', { numberOfKeys: 0, lua: FINISH });
    redis.defineCommand('swtPrune', { numberOfKeys: 0, lua: PRUNE });
  }
  return redis as Redis & Commands;
}

export function toRecord<P>(h: Record<string, string>): JobRecord<P> | undefined {
  if (!h.id) return undefined;
  return {
    id: h.id,
    kind: h.kind!,
    payload: JSON.parse(h.payload!) as P,
    key: h.key || null,
    group: h.grp || null,
    state: h.state as JobState,
    attempts: Number(h.attempts),
    maxAttempts: Number(h.max_attempts),
    error: h.error || null,
    createdAt: Number(h.created_at),
    updatedAt: Number(h.updated_at),
    runAt: Number(h.run_at),
    limit: h.limit_key ? { key: h.limit_key, max: Number(h.limit_max) || 1 } : null,
  };
}
