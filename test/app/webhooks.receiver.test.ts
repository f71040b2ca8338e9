/**
 * The webhook receiver on a real HTTP server on 127.0.0.1, with real queues (SQLite; a real
 * redis-server for the queue that stops answering): what it answers for each kind of request,
 * what it queues, and that the secret never reaches a log line.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startRedis, type RedisServer } from '../helpers/redisServer.js';
import { HANDLED_EVENTS } from '../../src/jobs/payloads.js';
import { eventKey, webhookReceiver, type ReceiverOptions } from '../../src/webhooks/receiver.js';
import { BullJobQueue } from '../../src/queue/bullQueue.js';
import type { EventPayload } from '../../src/jobs/payloads.js';
import { connectRedis } from '../../src/queue/redis.js';
import { SqliteJobQueue } from '../../src/queue/sqliteQueue.js';
import { example, sign } from '../helpers/webhooks.js';

const SECRET = 'receiver-test-secret-4f1c';
let dir: string;
let db: Database.Database;
let queue: SqliteJobQueue;
let server: Server | undefined;
let url: string;
let logLines: string[];

function logger() {
  logLines = [];
  return pino({ level: 'debug' }, new Writable({ write: (c, _e, cb) => (logLines.push(c.toString()), cb()) }));
}

async function serve(opts: Partial<ReceiverOptions> = {}): Promise<void> {
  const handler = webhookReceiver({ secret: SECRET, queue, handles: HANDLED_EVENTS, log: logger(), ...opts });
  server = createServer((req, res) => {
    if (!handler(req, res)) res.writeHead(404).end('not ours\n');
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function post(body: string, headers: Record<string, string | undefined>, path = '/api/github/webhooks') {
  const h = Object.fromEntries(Object.entries({ 'content-type': 'application/json', ...headers }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: h, body });
  return { status: res.status, text: await res.text() };
}

/** The queue key of a payload: the digest of the body as sent. */
const keyOf = (payload: unknown) => eventKey(createHash('sha256').update(JSON.stringify(payload)).digest('hex'));

/** A request written by hand (so it can stop mid-body): its status, body, and whether the App closed the connection. */
function rawRequest(headers: Record<string, string>, partialBody: string): Promise<{ status: number; body: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(url);
    const s = connect(Number(port), '127.0.0.1');
    let text = '';
    s.on('data', (d) => (text += d.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => resolve({ status: Number(text.split(' ')[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4), closed: true }));
    const all = { host: `127.0.0.1:${port}`, 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': 'raw-1', ...headers };
    s.write(`POST /api/github/webhooks HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${partialBody}`);
    // A connection the App never closes would leave this pending: the test's timeout says so.
  });
}

const signed = (event: string, payload: unknown, id: string, secret = SECRET) => {
  const body = JSON.stringify(payload);
  return post(body, { 'x-github-event': event, 'x-github-delivery': id, 'x-hub-signature-256': sign(body, secret) });
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), `swt-receiver-${process.pid}-`));
  db = new Database(join(dir, 'q.db'));
  queue = new SqliteJobQueue(db, {});
});

afterEach(async () => {
  if (server) await new Promise<void>((r) => server!.close(() => r()));
  server = undefined;
  await queue.stop({ timeoutMs: 1000 });
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('webhook receiver', () => {
  it('queues a handled event once under its body digest; a redelivery is answered and adds nothing', async () => {
    await serve();
    const payload = example('issues', 'opened') as { repository: { name: string; owner: { login: string } }; installation: { id: number } };
    expect(await signed('issues', payload, 'delivery-1')).toEqual({ status: 200, text: 'ok\n' });
    expect(await signed('issues', payload, 'delivery-1')).toEqual({ status: 200, text: 'ok\n' });
    const jobs = await queue.list();
    expect(jobs).toHaveLength(1);
    // An issue may lead to a reproduction: straight into the heavy lane, under the repository's limit.
    expect(jobs[0]).toMatchObject({ kind: 'work', key: keyOf(payload), state: 'queued', limit: { key: 'repo:Codertocat/Hello-World', max: 2 } });
    const e = jobs[0]!.payload as EventPayload;
    expect(e).toMatchObject({
      name: 'issues',
      delivery: 'delivery-1',
      target: { owner: payload.repository.owner.login, repo: payload.repository.name, installationId: payload.installation.id },
      installationId: payload.installation.id,
    });
    expect(e.payload).toEqual(payload);
    expect(logLines.join('')).toContain('redelivery of a queued webhook: ignored');
  });

  it('verified events the App does not act on (ping, issues.closed) are answered 200 and not queued', async () => {
    await serve();
    expect((await signed('ping', { zen: 'Design for failure.', hook_id: 1 }, 'ping-1')).status).toBe(200);
    expect((await signed('issues', { ...(example('issues', 'opened') as object), action: 'closed' }, 'closed-1')).status).toBe(200);
    expect(await queue.list()).toEqual([]);
  });

  it('decides what it can from the payload alone: a comment with no /swt line, a bot\'s comment, a title edit are answered 200 and not queued', async () => {
    await serve();
    const comment = (body: string, user = { login: 'octocat', type: 'User' }) => example('issue_comment', 'created', (p) => ((p.comment.body = body), (p.comment.user = user)));
    expect((await signed('issue_comment', comment('Thanks, looks good to me.'), 'plain-1')).status).toBe(200);
    expect((await signed('issue_comment', comment('/swt help', { login: 'swt-bot[bot]', type: 'Bot' }), 'bot-1')).status).toBe(200);
    expect((await signed('pull_request', example('pull_request', 'opened', (p) => ((p.action = 'edited'), (p.changes = { title: { from: 'old title' } }))), 'title-1')).status).toBe(200);
    expect(await queue.list()).toEqual([]);
    expect((await signed('issue_comment', comment('/swt validate'), 'command-1')).status).toBe(200);
    expect((await signed('pull_request', example('pull_request', 'opened', (p) => ((p.action = 'edited'), (p.changes = { body: { from: 'Fixes #2' } }))), 'body-1')).status).toBe(200);
    expect((await queue.list()).map((j) => (j.payload as EventPayload).delivery)).toEqual(['command-1', 'body-1']);
  });

  it('refuses what @octokit/webhooks refuses, with its status codes, and queues none of it; the secret is in no log line', async () => {
    await serve();
    const body = JSON.stringify(example('issues', 'opened'));
    const headers = { 'x-github-event': 'issues', 'x-github-delivery': 'bad-1', 'x-hub-signature-256': sign(body, SECRET) };
    const wrong = await post(body, { ...headers, 'x-hub-signature-256': sign(body, 'not-the-secret') });
    expect(wrong.status).toBe(400);
    expect(JSON.parse(wrong.text).error).toBe('signature does not match event payload and secret');
    expect((await post(body.replace('"opened"', '"reopened"'), headers)).status).toBe(400);
    const missing = await post(body, { ...headers, 'x-hub-signature-256': undefined, 'x-github-delivery': undefined });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text).error).toBe('Required headers missing: x-hub-signature-256, x-github-delivery');
    expect((await post(body, { ...headers, 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
    const notJson = 'not json';
    expect((await post(notJson, { ...headers, 'x-hub-signature-256': sign(notJson, SECRET) })).status).toBe(400);
    const get = await fetch(`${url}/api/github/webhooks`);
    expect(get.status).toBe(404);
    expect(JSON.parse(await get.text()).error).toBe('Unknown route: GET /api/github/webhooks');
    // Another path is left to the other handlers; a trailing slash is the same path.
    expect((await post(body, headers, '/elsewhere')).text).toBe('not ours\n');
    expect((await post(body, headers, '/api/github/webhooks/')).status).toBe(200);
    expect((await queue.list()).map((j) => j.key)).toEqual([eventKey(createHash('sha256').update(body).digest('hex'))]);
    expect(logLines.join('')).toContain('webhook signature does not match');
    expect(logLines.join('')).not.toContain(SECRET);
  });

  it('a payload over the size limit gets 413, and a handled event naming no repository 400', async () => {
    await serve({ maxBodyBytes: 64 * 1024 });
    const big = { ...(example('issues', 'opened') as object), padding: 'x'.repeat(100 * 1024) };
    const r = await signed('issues', big, 'big-1');
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text).error).toBe('payload larger than 65536 bytes');
    const noRepo = { ...(example('issues', 'opened') as object), repository: undefined };
    const n = await signed('issues', noRepo, 'norepo-1');
    expect(n.status).toBe(400);
    expect(JSON.parse(n.text).error).toBe('issues.opened payload names no repository');
    expect(await queue.list()).toEqual([]);
  });

  it('condemned on its headers (no signature in the right form), a request is refused before a byte of its body is read', async () => {
    await serve();
    // Headers only: the App answers without waiting for the 1 MiB the request declares.
    const first = await rawRequest({ 'x-hub-signature-256': 'sha1=abc', 'content-length': String(1024 * 1024) }, '');
    expect(first.status).toBe(400);
    expect(first.body).toContain('signature does not match event payload and secret');
    expect(first.closed).toBe(true);
    expect(await queue.list()).toEqual([]);
  });

  it('a body that stops arriving is cut after the idle time (408, connection closed), and its room is free again', async () => {
    await serve({ limits: { idleMs: 300, clientBodies: 1 } });
    const started = performance.now();
    const cut = await rawRequest({ 'x-hub-signature-256': `sha256=${'0'.repeat(64)}`, 'content-length': '1000' }, '{"a":');
    expect(cut.status).toBe(408);
    expect(cut.closed).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(logLines.join('')).toContain('webhook body stalled for 300 ms: cut');
    // The client's only slot is free again.
    expect((await signed('issues', example('issues', 'opened'), 'after-cut-1')).status).toBe(200);
  });

  it('a queue that fails: 500, so GitHub shows the delivery as failed and it can be redelivered', async () => {
    await serve();
    db.close();
    const r = await signed('issues', example('issues', 'opened'), 'down-1');
    expect(r.status).toBe(500);
    expect(JSON.parse(r.text).error).toBe('the webhook could not be queued; redeliver later');
    expect(logLines.join('')).toContain('queueing a webhook failed');
  });
});

describe('webhook receiver on a Redis that stops answering', () => {
  let redis: RedisServer;
  afterAll(async () => {
    await redis?.stop();
  });

  it('answers 503 before GitHub gives up; the write lands when Redis is back, and the redelivery adds nothing', async () => {
    redis = await startRedis();
    const conn = connectRedis(redis.url);
    const bull = new BullJobQueue(conn, { prefix: 'receiver' });
    try {
      // 2 s: room for the first enqueue, which loads BullMQ's scripts, on a loaded machine.
      await serve({ queue: bull, answerWithinMs: 2000 });
      expect((await signed('issues', example('issues', 'opened'), 'before-1')).status).toBe(200);
      // Another event (another body): the same body would be a replay of the first.
      const stalled = example('issues', 'opened', (p) => (p.issue.number = 2));
      process.kill(redis.pid()!, 'SIGSTOP');
      let r: { status: number; text: string };
      try {
        r = await signed('issues', stalled, 'stalled-1');
      } finally {
        process.kill(redis.pid()!, 'SIGCONT');
      }
      expect(r.status).toBe(503);
      expect(JSON.parse(r.text).error).toBe('the queue is not answering; redeliver later');
      for (let i = 0; i < 100 && !(await bull.findByKey(keyOf(stalled))); i++) await new Promise((s) => setTimeout(s, 50));
      expect(await bull.findByKey(keyOf(stalled))).toMatchObject({ kind: 'work', state: 'queued' });
      expect((await signed('issues', stalled, 'stalled-1')).status).toBe(200);
      expect((await bull.list({ kind: 'work' })).map((j) => j.key).sort()).toEqual([keyOf(example('issues', 'opened')), keyOf(stalled)].sort());
    } finally {
      await bull.stop();
      conn.disconnect();
    }
  }, 30_000);
});
