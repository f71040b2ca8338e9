/**
 * Unauthenticated input at the App's door: slow, huge, unsigned bodies; signed bodies replayed
 * under new delivery ids or another event's name; the status token in a URL. The App runs on a
 * real port on 127.0.0.1 with its real SQLite queue. The memory attack measures the App as it
 * runs in production, compiled (`tsc`, as `npm run build` does) and alone in a child process: the
 * type-stripping loader of test/helpers/tsChild.ts would hold some 50 MiB of its own.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startApp, type RunningApp } from '../../src/app/app.js';
import { eventKey } from '../../src/webhooks/receiver.js';
import { STALL_GRACE_MS } from '../../src/webhooks/admission.js';
import { JOB } from '../../src/jobs/payloads.js';
import { appKey, deliver, example, SECRET, sign } from '../helpers/webhooks.js';

const MiB = 1024 * 1024;
const noSandbox = {
  ensureEnvironment: () => Promise.reject(new Error('no sandbox in this test')),
  run: () => Promise.reject(new Error('no sandbox in this test')),
  openSession: () => Promise.reject(new Error('no sandbox in this test')),
};

/** A web-only App (receiver, health, status page; no workers): what faces the Internet. */
async function webApp(opts: { statusToken?: string } = {}): Promise<{ app: RunningApp; cleanup(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `swt-redteam-recv-${process.pid}-`));
  const app = await startApp({ appId: 1, privateKey: appKey(), secret: SECRET, dataDir, role: 'web', sandbox: noSandbox, env: {}, ...opts });
  return {
    app,
    async cleanup() {
      await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Resident memory of a process, from /proc: now, and the most it ever held. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** The App compiled (`tsc`, as `npm run build` does) and started as a web process in a child: what runs in production. */
interface CompiledApp {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

async function startCompiledApp(): Promise<CompiledApp> {
  // Inside the checkout, so that the build finds node_modules and the package's "type": "module".
  mkdirSync(resolve('test-artifacts'), { recursive: true });
  const build = mkdtempSync(resolve('test-artifacts', `redteam-build-${process.pid}-`));
  const dataDir = mkdtempSync(join(tmpdir(), `swt-redteam-mem-${process.pid}-`));
  const remove = () => [build, dataDir].forEach((d) => rmSync(d, { recursive: true, force: true }));
  const tsc = spawnSync(process.execPath, [resolve('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', build], { encoding: 'utf8' });
  if (tsc.stdout + tsc.stderr !== '') {
    remove();
    throw new Error(`tsc: ${tsc.stdout}${tsc.stderr}`);
  }
  // The App as a web process serves it (SWT_ROLE=web): the receiver, health and status page, the SQLite queue.
  writeFileSync(
    join(build, 'web-app.mjs'),
    `import { startApp } from ${JSON.stringify(pathToFileURL(join(build, 'app', 'app.js')).href)};
const running = await startApp({ appId: 1, privateKey: process.env.TEST_APP_KEY, secret: process.env.TEST_SECRET, dataDir: process.env.TEST_DATA_DIR, host: '127.0.0.1', role: 'web', env: process.env });
console.log('LISTENING ' + running.port);
`,
  );
  const proc: ChildProcess = spawn(process.execPath, ['--no-warnings', join(build, 'web-app.mjs')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TEST_APP_KEY: appKey(), TEST_SECRET: SECRET, TEST_DATA_DIR: dataDir, LOG_LEVEL: 'error' },
  });
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    remove();
  };
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  for (let i = 0; !/LISTENING \d+/.test(output); i++) {
    if (i > 1200 || proc.exitCode !== null) {
      await stop();
      throw new Error(`the App did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port: Number(/LISTENING (\d+)/.exec(output)![1]), pid: proc.pid!, stop };
}

describe('unauthenticated memory', () => {
  let app: CompiledApp | undefined;
  const sockets: Socket[] = [];

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await app?.stop();
  });

  it('attack: 32 slow, unsigned 24 MiB bodies leave the App under 150 MiB, and it still answers a good delivery', async () => {
    app = await startCompiledApp();
    const { port, pid } = app;
    const before = memoryOf(pid);

    // Each attacker declares 24 MiB (under GitHub's 25 MB) and sends it 256 KiB at a time, every 250 ms: a minute and a half per body.
    const answers: string[] = [];
    const chunk = Buffer.alloc(256 * 1024, 'x');
    const timers: NodeJS.Timeout[] = [];
    for (let i = 0; i < 32; i++) {
      const s = connect(port, '127.0.0.1');
      sockets.push(s);
      s.on('error', () => undefined); // the App may close the connection mid-send
      let answer = '';
      s.on('data', (d) => (answer += d.toString('latin1')));
      s.on('close', () => answers.push(answer.split('\r\n')[0] ?? ''));
      s.write(
        [
          'POST /api/github/webhooks HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          'Content-Type: application/json',
          'X-GitHub-Event: issues',
          `X-GitHub-Delivery: ${randomUUID()}`,
          `X-Hub-Signature-256: sha256=${'0'.repeat(64)}`,
          `Content-Length: ${24 * MiB}`,
          '',
          '',
        ].join('\r\n'),
      );
      timers.push(setInterval(() => !s.destroyed && s.write(chunk), 250));
    }
    try {
      // While they send, a real delivery still gets through and is queued.
      await new Promise((r) => setTimeout(r, 2000));
      const good = await deliver(`http://127.0.0.1:${port}`, 'issues', example('issues', 'opened'));
      expect(good.status).toBe(200);
      const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { jobs: Record<string, number> };
      expect(health.jobs).toEqual({ queued: 1 });
      // Until every attacker has been answered (at once, or when its request time ran out), the App's memory is watched.
      let peakDuring = 0;
      for (let i = 0; answers.length < 32; i++) {
        if (i > 600) throw new Error(`only ${answers.length} of the 32 connections were closed`);
        peakDuring = Math.max(peakDuring, memoryOf(pid).rss);
        await new Promise((r) => setTimeout(r, 100));
      }
      const after = memoryOf(pid);
      // eslint-disable-next-line no-console
      console.log(`receiver RSS: ${(before.rss / MiB).toFixed(0)} MiB before, ${(peakDuring / MiB).toFixed(0)} MiB at most during the attack, peak ever ${(after.peak / MiB).toFixed(0)} MiB; answers: ${[...new Set(answers)].join(' | ')}`);
      expect(after.peak).toBeLessThan(150 * MiB);
      // Each was refused at once (no room to hold it: 503) or cut off when its time was up (408).
      expect(answers.every((a) => /^HTTP\/1\.1 (503|408)/.test(a))).toBe(true);
      expect(answers.filter((a) => a.startsWith('HTTP/1.1 503')).length).toBeGreaterThanOrEqual(30);
    } finally {
      for (const t of timers) clearInterval(t);
    }
  });
});

/** A slow, unsigned request: headers declaring `bytes`, then one byte of body, then nothing. */
function slowBody(port: number, from: string, bytes: number): Socket {
  const s = connect({ port, host: '127.0.0.1', localAddress: from });
  s.on('error', () => undefined); // the App closes it when it refuses or cuts it
  s.resume(); // reads the App's answer, so that its close is seen
  s.write(
    [
      'POST /api/github/webhooks HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Content-Type: application/json',
      'X-GitHub-Event: issues',
      `X-GitHub-Delivery: ${randomUUID()}`,
      `X-Hub-Signature-256: sha256=${'0'.repeat(64)}`,
      `Content-Length: ${bytes}`,
      '',
      '{',
    ].join('\r\n'),
  );
  return s;
}

describe('slow unsigned bodies at the door', () => {
  let app: CompiledApp | undefined;
  let sockets: Socket[] = [];
  const queued = async () => ((await (await fetch(`http://127.0.0.1:${app!.port}/healthz`)).json()) as { jobs: Record<string, number> }).jobs.queued ?? 0;

  beforeAll(async () => {
    app = await startCompiledApp();
  }, 120_000);
  afterEach(() => {
    for (const s of sockets) s.destroy();
    sockets = [];
  });
  afterAll(async () => {
    await app?.stop();
  });

  // Loopback has a whole /8: attackers on 127.0.0.2–11, GitHub (the test's fetch) on 127.0.0.1.
  it('attack: 100 slow connections from 10 other addresses, each declaring 1 MiB and sending one byte, try to keep a signed delivery out: it is answered 200 within 10 s', async () => {
    const { port } = app!;
    for (let i = 0; i < 100; i++) sockets.push(slowBody(port, `127.0.0.${2 + (i % 10)}`, MiB));
    await Promise.all(sockets.map((s) => new Promise((r) => (s.connecting ? s.once('connect', r) : r(undefined)))));
    await new Promise((r) => setTimeout(r, 500));
    const before = await queued();
    const good = await deliver(`http://127.0.0.1:${port}`, 'issues', example('issues', 'opened', (p) => (p.issue.number = 101)));
    const open = sockets.filter((s) => !s.destroyed).length;
    // eslint-disable-next-line no-console
    console.log(`a delivery among 100 slow bodies from other addresses: ${good.status} in ${good.ms.toFixed(0)} ms; ${open} attackers still held open`);
    expect(good.status).toBe(200);
    expect(good.ms).toBeLessThan(10_000);
    // It got in while the attackers held the general pool (32 MiB of 1 MiB bodies): the reserve kept its room.
    expect(open).toBeGreaterThanOrEqual(30);
    expect(await queued()).toBe(before + 1);
  });

  // Behind a reverse proxy every request comes from the proxy's address, the delivery's too.
  it('attack: 100 slow connections from the delivery\'s own address (a proxy), each declaring 1 MiB and sending one byte, try to keep a signed delivery out: it is answered 200 within 10 s', async () => {
    const { port } = app!;
    for (let i = 0; i < 100; i++) sockets.push(slowBody(port, '127.0.0.1', MiB));
    await Promise.all(sockets.map((s) => new Promise((r) => (s.connecting ? s.once('connect', r) : r(undefined)))));
    // The bodies the App took are behind once their grace is over: a newcomer may take their room.
    await new Promise((r) => setTimeout(r, STALL_GRACE_MS + 1500)); // and well within the idle cut (5 s)
    const open = sockets.filter((s) => !s.destroyed).length;
    const before = await queued();
    const good = await deliver(`http://127.0.0.1:${port}`, 'issues', example('issues', 'opened', (p) => (p.issue.number = 102)));
    // eslint-disable-next-line no-console
    console.log(`a delivery among 100 slow bodies from its own address: ${good.status} in ${good.ms.toFixed(0)} ms; ${open} attackers were held open`);
    expect(good.status).toBe(200);
    expect(good.ms).toBeLessThan(10_000);
    expect(open).toBeGreaterThan(0);
    expect(await queued()).toBe(before + 1);
  });
});

describe('replays', () => {
  it('attack: one signed body replayed under 20 new delivery ids queues one job', async () => {
    const { app, cleanup } = await webApp();
    try {
      const payload = example('issues', 'opened');
      const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(app.url, 'issues', payload)));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      const jobs = await app.services.queue.list({ kind: JOB.work });
      expect(jobs).toHaveLength(1);
      expect(jobs[0]!.key).toBe(eventKey(createHash('sha256').update(JSON.stringify(payload)).digest('hex')));
    } finally {
      await cleanup();
    }
  });

  it("attack: a signed body re-sent under another event's name queues nothing more", async () => {
    const { app, cleanup } = await webApp();
    try {
      const pull = example('pull_request', 'opened');
      expect((await deliver(app.url, 'pull_request', pull)).status).toBe(200);
      // The same signed bytes, now claimed to be an issue event (issues.opened is handled too).
      const r = await deliver(app.url, 'issues', pull);
      expect(r.status).toBe(400);
      const issue = example('issues', 'opened');
      expect((await deliver(app.url, 'issues', issue)).status).toBe(200);
      expect((await deliver(app.url, 'issue_comment', issue)).status).toBe(200); // issue_comment.opened: not an action the App acts on
      const jobs = await app.services.queue.list({ kind: JOB.work });
      expect(jobs.map((j) => (j.payload as { name: string }).name).sort()).toEqual(['issues', 'pull_request']);
    } finally {
      await cleanup();
    }
  });

  it('attack: a body with no declared length (chunked) is refused before it is read', async () => {
    const { app, cleanup } = await webApp();
    try {
      const body = JSON.stringify(example('issues', 'opened'));
      // Chunked: no Content-Length, so nothing tells the App how much it would have to hold.
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(body));
          c.close();
        },
      });
      const res = await fetch(`${app.url}/api/github/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': 'chunked-1', 'x-hub-signature-256': sign(body) },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(411);
      expect(await app.services.queue.list()).toEqual([]);
    } finally {
      await cleanup();
    }
  });
});

describe('the status token', () => {
  it('attack: the status token in the query string is refused (it would be in access logs)', async () => {
    const token = 'redteam-status-token-1234';
    const { app, cleanup } = await webApp({ statusToken: token });
    try {
      for (const path of ['/swt', '/metrics']) {
        expect((await fetch(`${app.url}${path}?token=${token}`)).status).toBe(401);
        // Even alongside the header: the URL has already leaked it.
        expect((await fetch(`${app.url}${path}?token=${token}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
        expect((await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      }
      expect(await (await fetch(`${app.url}/swt?token=${token}`)).text()).toContain('(never in the URL)');
      // The whole reproducing test a clipped comment points to is behind the same header.
      const testPatch = `diff --git a/t.py b/t.py\n${'+x = 1\n'.repeat(20_000)}`;
      await app.services.store.saveReproduction({ owner: 'o', repo: 'r' }, 7, { branch: 'main', sha: 'abc' }, { status: 'reproduced', strategy: 'agent', testPatch, reason: 'fails', usage: { promptTokens: 0, completionTokens: 0, costUsd: 0, steps: 0, wallMs: 0 } });
      expect((await fetch(`${app.url}/swt/reproduction/o/r/7?token=${token}`)).status).toBe(401);
      const whole = await fetch(`${app.url}/swt/reproduction/o/r/7`, { headers: { authorization: `Bearer ${token}` } });
      expect([whole.status, await whole.text()]).toEqual([200, testPatch]);
      expect((await fetch(`${app.url}/swt/reproduction/o/r/8`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
    } finally {
      await cleanup();
    }
  });
});
