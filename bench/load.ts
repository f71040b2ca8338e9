/**
 * bench:load — the web process under webhook bursts while the workers are busy, at scale: one
 * redis-server, one web process (SWT_ROLE=web, `npm start`'s entry) and two worker processes
 * (`swt worker`), each its own process, against the loopback fake GitHub; all on 127.0.0.1.
 *
 * 200 signed deliveries (`/swt help` comments by a maintainer, over 20 issues) go in bursts of 20,
 * twice, side by side: first with the workers idle, then while they run real validations in
 * containers. A sender process of its own times them. Every delivery must be acknowledged (200),
 * every one must have its job in Redis exactly once (redeliveries add none), each must end in its
 * notice job, and the busy p99 must stay under 100 ms. The last line of stdout is one JSON object.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { fixtureConfig, newAppKey, publishFixture, type PublishedFixture } from '../src/demo/appDemo.js';
import { FakeGitHub } from '../src/demo/fakeGitHub.js';
import { BullJobQueue } from '../src/queue/bullQueue.js';
import { JOB } from '../src/jobs/payloads.js';
import { connectRedis } from '../src/queue/redis.js';
import { git } from '../src/repo/gitExec.js';
import { freePort, startRedis, type RedisServer } from '../test/helpers/redisServer.js';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PREFIX = 'bench';
const BURSTS = Number(process.env.SWT_BENCH_BURSTS ?? 10);
const BURST_SIZE = Number(process.env.SWT_BENCH_BURST_SIZE ?? 20);
const BURST_GAP_MS = 250;
const TARGET_P99_MS = 100;
/** In production the workers are other machines; here they share 2 cores with the web process. */
const WORKER_NICE = Number(process.env.SWT_BENCH_WORKER_NICE ?? 10);
/**
 * The layout stands in for separate machines: the web process and the sender (GitHub) on core 0;
 * Redis, the workers, their containers (SWT_CPUSET_CPUS), their Docker engine (dockerd and
 * containerd, pinned for the run and put back after) and the fake GitHub they fetch from on the
 * other cores. SWT_BENCH_PIN=off lets every process take any core.
 */
const LAST_CPU = cpus().length - 1;
const PIN = process.env.SWT_BENCH_PIN !== 'off' && LAST_CPU >= 1;
const WEB_CPUS = '0';
const WORK_CPUS = PIN ? (LAST_CPU >= 2 ? `1-${LAST_CPU}` : '1') : undefined;

function pin(pid: number | undefined, list: string): void {
  if (!PIN || !pid) return;
  const r = spawnSync('taskset', ['-a', '-p', '-c', list, String(pid)], { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`taskset could not pin ${pid} to CPUs ${list} (util-linux's taskset is needed; SWT_BENCH_PIN=off runs unpinned)`);
}

/** The local Docker engine's daemons moved to `list`; the returned function puts them back. */
function pinEngine(list: string): () => void {
  if (!PIN || (process.env.DOCKER_HOST && !process.env.DOCKER_HOST.startsWith('unix://'))) return () => undefined;
  const moved: Array<{ pid: string; was: string }> = [];
  for (const name of ['dockerd', 'containerd']) {
    for (const pid of (spawnSync('pidof', [name], { encoding: 'utf8' }).stdout ?? '').trim().split(/\s+/).filter(Boolean)) {
      const was = /list:\s*(\S+)/.exec(spawnSync('taskset', ['-p', '-c', pid], { encoding: 'utf8' }).stdout ?? '')?.[1];
      if (!was) continue;
      pin(Number(pid), list);
      moved.push({ pid, was });
    }
  }
  return () => {
    for (const m of moved) spawnSync('taskset', ['-a', '-p', '-c', m.was, m.pid], { stdio: 'ignore' });
  };
}

/** CPU time a process has used so far, in ms (/proc counts in USER_HZ, 100 a second). */
function cpuMsOf(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
const stats = (ms: number[]) => ({ p50: Math.round(quantile(ms, 0.5) * 10) / 10, p99: Math.round(quantile(ms, 0.99) * 10) / 10, max: Math.round(Math.max(...ms) * 10) / 10 });

/** A Node process of ours, on the CPUs listed (when pinning); `nice` lowers its CPU priority (the workers). */
function startNode(script: string, args: string[], env: NodeJS.ProcessEnv, opts: { nice?: number; cpus?: string } = {}): { child: ChildProcess; output: () => string } {
  const argv = [fileURLToPath(new URL(script, import.meta.url)), ...args];
  const prefix = [...(PIN && opts.cpus ? ['taskset', '-c', opts.cpus] : []), ...(opts.nice ? ['nice', '-n', String(opts.nice)] : [])];
  const cmd = [...prefix, process.execPath, ...argv];
  const child = spawn(cmd[0]!, cmd.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d.toString()).slice(-20_000)));
  child.stderr!.on('data', (d) => (out = (out + d.toString()).slice(-20_000)));
  return { child, output: () => out };
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          const t = setTimeout(() => c.kill('SIGKILL'), 20_000);
          c.once('exit', () => (clearTimeout(t), resolve()));
          c.kill('SIGTERM');
        }),
    ),
  );
}

interface Round {
  label: string;
  ms: number[];
  ids: string[];
  statuses: number[];
  busyAtBursts: number[];
  /** CPU ms per delivery while the round ran (Redis's includes the workers' queue traffic). */
  cpuPerDelivery: { web: number; redis: number; sender: number };
}

async function main(): Promise<void> {
  const secret = 'swt-bench-load-secret';
  const key = newAppKey();
  let redis: RedisServer | undefined;
  const fake = await new FakeGitHub({ webhookSecret: secret, appPrivateKey: key }).start();
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  let published: PublishedFixture | undefined;
  const conn: { close?: () => void } = {};
  let unpinEngine = () => undefined as void;
  try {
    pin(process.pid, WORK_CPUS ?? '0');
    unpinEngine = pinEngine(WORK_CPUS ?? '0');
    redis = await startRedis();
    pin(redis.pid(), WORK_CPUS ?? '0');
    published = await publishFixture(fake, 'py-durations', { config: (fx) => fixtureConfig(fx, { generation: { strategy: 'snippet' } }) });
    const { owner, repo, fx } = published;
    fake.setPermission(owner, repo, 'maintainer', 'admin');
    const port = await freePort();
    const webUrl = `http://127.0.0.1:${port}`;
    fake.appUrl = webUrl;
    const env = (dataDir: string): NodeJS.ProcessEnv => ({
      APP_ID: String(fake.appId),
      PRIVATE_KEY: key,
      WEBHOOK_SECRET: secret,
      GHE_HOST: fake.host,
      GHE_PROTOCOL: 'http',
      REDIS_URL: redis!.url,
      SWT_REDIS_PREFIX: PREFIX,
      SWT_DATA_DIR: dataDir,
      SWT_GITHUB_THROTTLE: 'off',
      SWT_REPO_CONCURRENCY: '2',
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: '',
    });
    const dir = async () => {
      const d = await mkdtemp(join(tmpdir(), 'swt-benchload-'));
      dirs.push(d);
      return d;
    };
    const web = startNode('../src/app/index.js', [], { ...env(await dir()), SWT_ROLE: 'web', HOST: '127.0.0.1', PORT: String(port) }, { cpus: WEB_CPUS });
    children.push(web.child);
    const workers = [];
    for (let i = 0; i < 2; i++) {
      const w = startNode('../src/cli/bin.js', ['worker'], { ...env(await dir()), ...(WORK_CPUS ? { SWT_CPUSET_CPUS: WORK_CPUS } : {}) }, { nice: WORKER_NICE, cpus: WORK_CPUS });
      children.push(w.child);
      workers.push(w);
    }
    for (let i = 0; ; i++) {
      if (await fetch(`${webUrl}/healthz`).then((r) => r.ok, () => false)) break;
      if (i > 300 || web.child.exitCode !== null) throw new Error(`the web process did not start:\n${web.output()}`);
      await sleep(100);
    }
    const redisConn = connectRedis(redis.url);
    conn.close = () => redisConn.disconnect();
    const queue = new BullJobQueue(redisConn, { prefix: PREFIX });
    const running = async (kind: string) => (await queue.list({ kind, state: 'running' })).length;

    // The issue is reproduced first, so that each PR check runs containers at once.
    const issue = fake.addIssue(owner, repo, { title: fx.issue.title, body: fx.issue.body });
    // The threads the `/swt help` comments go to (a question label keeps them from being reproduced).
    const threads = Array.from({ length: BURST_SIZE }, (_, k) => fake.addIssue(owner, repo, { title: `Question ${k}?`, body: 'How do I use this?' }).number);
    await fake.deliver('issues', fake.issuePayload(owner, repo, issue.number, 'opened'));
    for (let i = 0; !fake.issue(owner, repo, issue.number).labels.includes('reproduced'); i++) {
      if (i > 6000) throw new Error(`the issue was never reproduced:\n${workers.map((w) => w.output()).join('\n')}`);
      await sleep(100);
    }
    log('issue reproduced by a worker');

    const sendDir = await dir();
    const send = async (name: string, deliveries: Array<{ id: string; event: string; body: string }>) => {
      const file = join(sendDir, `${name}.json`);
      await writeFile(file, JSON.stringify(deliveries));
      const client = startNode('./loadClient.js', [file, webUrl, String(BURST_SIZE), String(BURST_GAP_MS)], { WEBHOOK_SECRET: secret }, { cpus: WEB_CPUS });
      const code = await new Promise<number | null>((r) => client.child.once('exit', r));
      if (code !== 0) throw new Error(`the sender failed: ${client.output()}`);
      return JSON.parse(client.output().trim().split('\n').at(-1)!) as { answers: Array<{ id: string; status: number; ms: number }>; cpuMs: number };
    };
    const round = async (label: string): Promise<Round> => {
      const deliveries = Array.from({ length: BURSTS * BURST_SIZE }, (_, k) => ({
        id: `${label}-${k}-${randomUUID()}`,
        event: 'issue_comment',
        body: JSON.stringify(fake.commentPayload(owner, repo, threads[k % threads.length]!, '/swt help', { login: 'maintainer', type: 'User' }, 'OWNER')),
      }));
      const r: Round = { label, ms: [], ids: [], statuses: [], busyAtBursts: [], cpuPerDelivery: { web: 0, redis: 0, sender: 0 } };
      const cpu0 = { web: cpuMsOf(web.child.pid), redis: cpuMsOf(redis!.pid()) };
      // How many validations run, sampled while the bursts go out.
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          r.busyAtBursts.push(await running(JOB.validate));
          await sleep(BURST_GAP_MS);
        }
      })();
      const sent = await send(label, deliveries);
      const per = (ms: number) => Math.round((ms / deliveries.length) * 100) / 100;
      r.cpuPerDelivery = { web: per(cpuMsOf(web.child.pid) - cpu0.web), redis: per(cpuMsOf(redis!.pid()) - cpu0.redis), sender: per(sent.cpuMs) };
      sampling = false;
      await sampler;
      for (const a of sent.answers) {
        r.ms.push(a.ms);
        r.ids.push(a.id);
        r.statuses.push(a.status);
      }
      log(`${label}: ${r.ids.length} deliveries, p99 ${stats(r.ms).p99} ms, validations running meanwhile ${Math.min(...r.busyAtBursts)}–${Math.max(...r.busyAtBursts)}, CPU per delivery ${JSON.stringify(r.cpuPerDelivery)} ms`);
      return r;
    };

    // Three bursts first, not measured: the web process's first requests load code and scripts and warm its JIT.
    await send('warmup', Array.from({ length: 3 * BURST_SIZE }, (_, k) => ({ id: `warmup-${k}-${randomUUID()}`, event: 'issue_comment', body: JSON.stringify(fake.commentPayload(owner, repo, threads[k % threads.length]!, '/swt help', { login: 'maintainer', type: 'User' }, 'OWNER')) })));
    const idle = await round('idle');

    // Busy workers: pull requests whose checks run in containers on both workers.
    const pulls = [];
    let parent = published.goodFix;
    for (let i = 0; i < 8; i++) {
      const genv = { GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.invalid', GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.invalid' };
      parent = (await git(fx.dir, ['commit-tree', `${parent}^{tree}`, '-p', parent, '-m', `attempt ${i}`], { env: genv })).trim();
      await fake.pushRef(owner, repo, fx.dir, parent, `refs/heads/attempt-${i}`);
      pulls.push(await fake.addPull(owner, repo, { title: `Attempt ${i}`, body: `Fixes #${issue.number}`, headSha: parent, headRef: `attempt-${i}` }));
    }
    for (const p of pulls) await fake.deliver('pull_request', await fake.pullPayload(owner, repo, p.number, 'opened'));
    for (let i = 0; (await running(JOB.validate)) < 2; i++) {
      if (i > 3000) throw new Error('the workers never got busy');
      await sleep(100);
    }
    const busy = await round('busy');

    // Redeliveries of the busy round's first burst: acknowledged, no new job.
    const again = await Promise.all(
      busy.ids.slice(0, BURST_SIZE).map((id) => fake.deliver('issue_comment', fake.commentPayload(owner, repo, threads[0]!, '/swt help', { login: 'maintainer', type: 'User' }, 'OWNER'), { id })),
    );

    // None lost: every delivery has its event job in Redis, once; each ends in its notice job.
    const all = [...idle.ids, ...busy.ids];
    // Event jobs are keyed by their body's digest; each carries the delivery id it came under.
    const events = (await queue.list({ kind: JOB.event })).filter((j) => all.includes((j.payload as { delivery?: string }).delivery ?? ''));
    const found = all.map((id) => events.find((j) => (j.payload as { delivery?: string }).delivery === id));
    const lost = found.filter((j) => !j).length;
    const duplicates = events.length - new Set(events.map((j) => j.key)).size;
    for (let k = 0; (await queue.counts()).queued > 0 && k < 1200; k++) await sleep(100);
    const noticed = (await Promise.all(all.map((id) => queue.findByKey(`notice:${id}`)))).filter(Boolean).length;
    const acknowledged = [...idle.statuses, ...busy.statuses].filter((s) => s === 200).length;
    const redelivered = again.filter((d) => d.status === 200).length;
    const i = stats(idle.ms);
    const bz = stats(busy.ms);
    const result = {
      deliveries: all.length,
      acknowledged,
      lost,
      duplicates,
      noticed,
      redeliveries: { sent: again.length, acknowledged: redelivered },
      bursts: { perRound: BURSTS, size: BURST_SIZE, gapMs: BURST_GAP_MS },
      workers: 2,
      layout: PIN ? { web: WEB_CPUS, sender: WEB_CPUS, redis: WORK_CPUS, workers: WORK_CPUS, containers: WORK_CPUS, dockerEngine: WORK_CPUS } : 'unpinned',
      busyValidations: { min: Math.min(...busy.busyAtBursts), max: Math.max(...busy.busyAtBursts) },
      idleMs: i,
      busyMs: bz,
      p99BusyOverIdle: Math.round((bz.p99 / i.p99) * 100) / 100,
      cpuMsPerDelivery: { idle: idle.cpuPerDelivery, busy: busy.cpuPerDelivery },
      targetP99Ms: TARGET_P99_MS,
      pass: acknowledged === all.length && lost === 0 && duplicates === 0 && noticed === all.length && bz.p99 < TARGET_P99_MS && i.p99 < TARGET_P99_MS,
    };
    process.stdout.write(
      [
        '| workers | deliveries | acknowledged | lost | webhook answer p50 / p99 / max | validations running |',
        '|---|---|---|---|---|---|',
        `| idle | ${idle.ids.length} | ${idle.statuses.filter((s) => s === 200).length} | ${found.slice(0, idle.ids.length).filter((j) => !j).length} | ${i.p50} / ${i.p99} / ${i.max} ms | ${Math.min(...idle.busyAtBursts)}–${Math.max(...idle.busyAtBursts)} |`,
        `| busy | ${busy.ids.length} | ${busy.statuses.filter((s) => s === 200).length} | ${found.slice(idle.ids.length).filter((j) => !j).length} | ${bz.p50} / ${bz.p99} / ${bz.max} ms | ${result.busyValidations.min}–${result.busyValidations.max} |`,
        `busy p99 / idle p99: ${result.p99BusyOverIdle}; target p99 < ${TARGET_P99_MS} ms: ${bz.p99 < TARGET_P99_MS ? 'met' : 'NOT met'}`,
        `CPU ms per delivery, idle / busy: web ${idle.cpuPerDelivery.web} / ${busy.cpuPerDelivery.web}, sender ${idle.cpuPerDelivery.sender} / ${busy.cpuPerDelivery.sender}, Redis (with the workers' traffic) ${idle.cpuPerDelivery.redis} / ${busy.cpuPerDelivery.redis}`,
        JSON.stringify(result),
        '',
      ].join('\n'),
    );
    await queue.stop();
    if (!result.pass) process.exitCode = 1;
  } finally {
    unpinEngine();
    conn.close?.();
    await stopAll(children);
    await published?.cleanup();
    await fake.close();
    await redis?.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`bench:load failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
