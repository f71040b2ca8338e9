/** One contract, two stores: the SQLite Store and the Redis Store (real redis-server) remember the same. */
import type Database from 'better-sqlite3';
import type { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisStore } from '../../src/store/redisStore.js';
import { openDatabase, SqliteStore } from '../../src/store/sqliteStore.js';
import type { Store } from '../../src/store/types.js';
import type { Reproduction } from '../../src/generation/types.js';
import { connectRedis } from '../../src/queue/redis.js';
import { startRedis, type RedisServer } from '../helpers/redisServer.js';

let redis: RedisServer;
let conn: Redis;
let dir: string;
let db: Database.Database | undefined;
let round = 0;

beforeAll(async () => {
  redis = await startRedis();
  conn = connectRedis(redis.url);
});
afterAll(async () => {
  conn?.disconnect();
  await redis?.stop();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), `swt-store-${process.pid}-`));
  round++;
});
afterEach(() => {
  db?.close();
  db = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function makeStore(engine: 'sqlite' | 'redis'): Store {
  if (engine === 'redis') return new RedisStore(conn, { prefix: `s${process.pid}-${round}` });
  db = openDatabase(join(dir, 'swt.db'));
  return new SqliteStore(db);
}

const R = { owner: 'octo', repo: 'calc' };
const rep = (status: Reproduction['status'], strategy: string, costUsd: number): Reproduction =>
  ({
    status,
    strategy,
    testPatch: status === 'reproduced' ? `diff --git a/t.py b/t.py\n+def test_${strategy}(): assert False\n` : '',
    failureExcerpt: status === 'reproduced' ? 'AssertionError' : undefined,
    reason: status === 'reproduced' ? 'fails on base' : 'nothing failed',
    usage: { promptTokens: 100, completionTokens: 20, costUsd, steps: 1, wallMs: 900 },
  }) as Reproduction;

describe.each(['sqlite', 'redis'] as const)('Store contract on %s', (engine) => {
  it('refusals and approvals are remembered once', async () => {
    const s = makeStore(engine);
    expect(await s.claimRefusal(R, 5)).toBe(true);
    expect(await s.claimRefusal(R, 5)).toBe(false);
    expect(await s.claimRefusal({ owner: 'octo', repo: 'other' }, 5)).toBe(true);
    expect(await s.isApproved(R, 3, 'abc')).toBe(false);
    await s.approve(R, 3, 'abc');
    await s.approve(R, 3, 'abc');
    expect(await s.isApproved(R, 3, 'abc')).toBe(true);
    expect(await s.isApproved(R, 3, 'def')).toBe(false);
    // A head's first sighting stays its time: an approval written before it cannot reach it.
    expect(await s.seeHead(R, 3, 'abc', 1000)).toBe(1000);
    expect(await s.seeHead(R, 3, 'abc', 5000)).toBe(1000);
    expect(await s.seeHead(R, 4, 'abc', 7000)).toBe(7000);
  });

  it('reproductions: the newest that reproduced, the count, the costs', async () => {
    const s = makeStore(engine);
    await s.saveReproduction(R, 1, { branch: 'main', sha: 'a1' }, rep('reproduced', 'snippet', 0));
    const second = await s.saveReproduction(R, 1, { branch: 'main', sha: 'a2' }, rep('reproduced', 'agent', 0.12));
    await s.saveReproduction(R, 1, { branch: 'main', sha: 'a3' }, rep('not-reproduced', 'agent', 0.05));
    await s.saveReproduction(R, 2, { branch: 'main', sha: 'a3' }, rep('not-reproduced', 'zero-shot-plus', 0.01));
    expect(await s.latestReproduction(R, 1)).toMatchObject({ id: second, issue: 1, baseSha: 'a2', strategy: 'agent', costUsd: 0.12, tokens: 120, wallMs: 900, failureExcerpt: 'AssertionError' });
    expect(await s.latestReproduction(R, 2)).toBeUndefined();
    expect(await s.countReproductions(R, 1)).toBe(3);
    expect((await s.reproductionCosts(R)).map((c) => [c.issue, c.strategy, c.status, c.costUsd])).toEqual([
      [1, 'snippet', 'reproduced', 0],
      [1, 'agent', 'reproduced', 0.12],
      [1, 'agent', 'not-reproduced', 0.05],
      [2, 'zero-shot-plus', 'not-reproduced', 0.01],
    ]);
    expect(await s.reproductionCosts({ owner: 'x', repo: 'y' })).toEqual([]);
  });

  it('keeps the raw answers of a model with the reproduction, and the model that wrote them', async () => {
    const s = makeStore(engine);
    const answers = [{ purpose: 'zero-shot-plus', text: '`test_parse.py`\n```python\ndef test_x(): ...\n```', promptTokens: 715, completionTokens: 43, finishReason: 'stop' }];
    const failed = { ...rep('not-reproduced', 'zero-shot-plus', 0), model: { name: 'local:qwen2.5-coder-1.5b', local: true }, evidence: { applied: false, testFiles: [], runs: [], reproducingTests: [], notes: [], answers } };
    const at = Date.now();
    await s.saveReproduction(R, 9, { branch: 'main', sha: 'z1' }, failed);
    expect(await s.reproductionAt(R, 9, 'z1', at)).toMatchObject({ status: 'not-reproduced', model: 'local:qwen2.5-coder-1.5b', answers });
    await s.saveReproduction(R, 9, { branch: 'main', sha: 'z2' }, rep('reproduced', 'snippet', 0));
    expect(await s.latestReproduction(R, 9)).toMatchObject({ strategy: 'snippet', answers: [] });
  });

  it('verdicts, candidates and closing a PR', async () => {
    const s = makeStore(engine);
    const v = { issue: 1, headSha: 'h', title: 'Fix', author: 'alice', verdict: 'likely-correct' as const, f2p: 1, failing: 0, durationMs: 10, diffSize: 4 };
    await s.saveVerdict(R, { ...v, pr: 7 });
    await s.saveVerdict(R, { ...v, pr: 8, verdict: 'does-not-fix', f2p: 0, failing: 1 });
    await s.saveVerdict(R, { ...v, pr: 8, issue: 2 });
    expect((await s.candidates(R, 1)).map((c) => [c.pr, c.verdict]).sort()).toEqual([
      [7, 'likely-correct'],
      [8, 'does-not-fix'],
    ]);
    expect(await s.closePull(R, 8)).toEqual([1, 2]);
    expect(await s.closePull(R, 8)).toEqual([]);
    expect((await s.candidates(R, 1)).map((c) => c.pr)).toEqual([7]);
    expect(await s.verdictOf(R, 8, 1)).toMatchObject({ pr: 8, verdict: 'does-not-fix', open: false });
    await s.saveVerdict(R, { ...v, pr: 8 });
    expect(await s.verdictOf(R, 8, 1)).toMatchObject({ verdict: 'likely-correct', open: true });
  });

  it('check runs by head, by id, and the newest head of a PR', async () => {
    const s = makeStore(engine);
    await s.saveCheckRun(R, 'h1', 4, 100);
    await s.saveCheckRun(R, 'h2', 4, 101);
    expect(await s.checkRunFor(R, 'h1')).toBe(100);
    expect(await s.pullOfCheckRun(R, 101)).toEqual({ pr: 4, headSha: 'h2' });
    expect(await s.latestHead(R, 4)).toBe('h2');
    await new Promise((r) => setTimeout(r, 5)); // a later check run (a re-run of h1)
    await s.saveCheckRun(R, 'h1', 4, 102);
    expect(await s.checkRunFor(R, 'h1')).toBe(102);
    expect(await s.latestHead(R, 4)).toBe('h1');
    expect(await s.latestHead(R, 5)).toBeUndefined();
  });

  it('outcomes, merges with follow-ups, confirmations', async () => {
    const s = makeStore(engine);
    await s.recordOutcome({ jobId: '9', owner: 'octo', repo: 'calc', target: '#1', verdict: 'reproduced', costUsd: 0.1, tokens: 5, wallMs: 3, at: 1 });
    expect([...(await s.outcomes(['9', '10'])).keys()]).toEqual(['9']);
    const m = { owner: 'octo', repo: 'calc', mergeSha: 'm1', author: 'bot[bot]', gated: true, issues: [1], strategy: 'agent', followUp: null };
    await s.recordMerge({ ...m, pr: 7, mergedAt: 10 });
    await s.recordMerge({ ...m, pr: 9, mergedAt: 20, author: 'alice', gated: false });
    await s.recordMerge({ ...m, owner: 'o2', pr: 1, mergedAt: 5 });
    await s.setFollowUp(R, 7, { kind: 'fixed-again', pr: 9 });
    await s.setFollowUp(R, 7, { kind: 'reverted', pr: 11 }); // the first follow-up stays
    expect((await s.merges(R)).map((x) => [x.pr, x.followUp])).toEqual([
      [7, { kind: 'fixed-again', pr: 9 }],
      [9, null],
    ]);
    expect((await s.merges()).map((x) => `${x.owner}#${x.pr}`)).toEqual(['o2#1', 'octo#7', 'octo#9']);
    const c = { owner: 'octo', repo: 'calc', issue: 1, pr: 7, baseSha: 'b', strategy: 'agent', reproductionId: 2, at: 30 };
    await s.saveConfirmation({ ...c, mergeSha: 'm1', confirmed: true, transitions: ['F2P'] });
    await s.saveConfirmation({ ...c, mergeSha: 'm1', confirmed: true, transitions: ['F2P'] });
    await s.saveConfirmation({ ...c, issue: 2, mergeSha: 'm2', confirmed: false, transitions: ['F2F'], at: 31 });
    expect((await s.confirmations(R)).map((x) => [x.issue, x.confirmed, x.transitions])).toEqual([
      [1, true, ['F2P']],
      [2, false, ['F2F']],
    ]);
    expect(await s.confirmations({ owner: 'none', repo: 'x' })).toEqual([]);
  });
  it('a reproduction at a sha, since a time: what a retried job finds of its own work', async () => {
    const s = makeStore(engine);
    const before = Date.now();
    await s.saveReproduction(R, 3, { branch: 'main', sha: 's1' }, rep('not-reproduced', 'snippet', 0.02));
    expect(await s.reproductionAt(R, 3, 's1', before)).toMatchObject({ issue: 3, baseSha: 's1', status: 'not-reproduced', costUsd: 0.02 });
    expect(await s.reproductionAt(R, 3, 's2', before)).toBeUndefined();
    expect(await s.reproductionAt(R, 3, 's1', Date.now() + 60_000)).toBeUndefined();
    const later = await s.saveReproduction(R, 3, { branch: 'main', sha: 's1' }, rep('reproduced', 'agent', 0.1));
    expect(await s.reproductionAt(R, 3, 's1', before)).toMatchObject({ id: later, status: 'reproduced' });
  });

  it('spend adds up per scope and day; an author gets `limit` runs per window, atomically', async () => {
    const s = makeStore(engine);
    expect(await s.spendOf('installation:1', '2026-11-26')).toEqual({ tokens: 0, usd: 0, containerMs: 0 });
    await s.addSpend('installation:1', '2026-11-26', { tokens: 1000, usd: 0.25, containerMs: 60_000 });
    await s.addSpend('installation:1', '2026-11-26', { tokens: 500, usd: 0.5, containerMs: 30_000 });
    await s.addSpend('installation:1', '2026-11-27', { tokens: 7, usd: 1, containerMs: 1 });
    await s.addSpend('installation:2', '2026-11-26', { tokens: 9, usd: 9, containerMs: 9 });
    const day = await s.spendOf('installation:1', '2026-11-26');
    expect({ ...day, usd: Number(day.usd.toFixed(6)) }).toEqual({ tokens: 1500, usd: 0.75, containerMs: 90_000 });
    const now = 10_000_000;
    // 8 at once for a limit of 5: exactly 5 are granted, whichever engine serialises them.
    const granted = await Promise.all(Array.from({ length: 8 }, () => s.takeAuthorRun('installation:1', 'Mallory', now, 3600_000, 5)));
    expect(granted.filter(Boolean)).toHaveLength(5);
    expect(await s.takeAuthorRun('installation:1', 'mallory', now + 1000, 3600_000, 5)).toBe(false);
    expect(await s.takeAuthorRun('installation:1', 'alice', now, 3600_000, 5)).toBe(true);
    expect(await s.takeAuthorRun('installation:2', 'mallory', now, 3600_000, 5)).toBe(true);
    // An hour on, the window has moved past them.
    expect(await s.takeAuthorRun('installation:1', 'mallory', now + 3600_001, 3600_000, 5)).toBe(true);
  });

  it('known flaky tests per repository, most often first', async () => {
    const s = makeStore(engine);
    expect(await s.knownFlaky(R)).toEqual([]);
    await s.recordFlaky(R, ['t.py::test_b', 't.py::test_a', 't.py::test_a']);
    await s.recordFlaky(R, ['t.py::test_a']);
    await s.recordFlaky(R, []);
    await s.recordFlaky(R, ['t.py::test_c']);
    await s.recordFlaky({ owner: 'octo', repo: 'other' }, ['x.test.js > y']);
    // test_a seen in 2 validations; b and c once each (ties: reverse id order).
    expect(await s.knownFlaky(R)).toEqual(['t.py::test_a', 't.py::test_c', 't.py::test_b']);
    expect(await s.knownFlaky({ owner: 'octo', repo: 'other' })).toEqual(['x.test.js > y']);
  });
});
