/**
 * bench:app — how fast a PR author sees the check start: the time from a webhook's delivery to
 * the check run `swt: reproduction` showing in_progress on the (fake) GitHub, over many
 * deliveries while the heavy workers are busy with real validations in containers.
 *
 * Two runs side by side, each with its own App:
 *   ghes:   SWT_GITHUB_THROTTLE=off (a GHES without rate limits), 100 PRs, one every 250 ms;
 *   github: Probot's default throttling (GitHub's secondary rate limits: one write a second, one
 *           new comment every 3 s, per process), 15 PRs, one every 6 s: a PR check costs about
 *           five writes (check run, GraphQL, progress, result, PR comment), so that is what the
 *           limits sustain.
 * The last line of stdout is one JSON object.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type RunningApp } from '../src/app/app.js';
import { fixtureConfig, newAppKey, publishFixture, type PublishedFixture } from '../src/demo/appDemo.js';
import { FakeGitHub } from '../src/demo/fakeGitHub.js';
import { JOB, prGroup } from '../src/jobs/payloads.js';
import { createDockerSandbox } from '../src/sandbox/index.js';
import { git } from '../src/repo/gitExec.js';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
const round = (n: number) => Math.round(n);

interface ModeResult {
  mode: string;
  deliveries: number;
  intervalMs: number;
  throttle: boolean;
  receiptToInProgressMs: { p50: number; p99: number; max: number };
  webhookAnswerMs: { p50: number; p99: number; max: number };
  /** Validation jobs running in containers at each delivery. */
  busyWorkers: { min: number; max: number };
}

async function runMode(mode: string, n: number, intervalMs: number, throttle: boolean): Promise<ModeResult> {
  const secret = 'swt-bench-secret';
  const key = newAppKey();
  const fake = await new FakeGitHub({ webhookSecret: secret, appPrivateKey: key }).start();
  const dataDir = await mkdtemp(join(tmpdir(), 'swt-benchapp-'));
  let published: PublishedFixture | undefined;
  let app: RunningApp | undefined;
  try {
    published = await publishFixture(fake, 'py-durations', { config: (fx) => fixtureConfig(fx, { generation: { strategy: 'snippet' } }) });
    const { owner, repo, fx } = published;
    app = await startApp({
      appId: fake.appId,
      privateKey: key,
      secret,
      dataDir,
      sandbox: createDockerSandbox(),
      env: { ...process.env, GHE_HOST: fake.host, GHE_PROTOCOL: 'http', SWT_GITHUB_THROTTLE: throttle ? 'on' : 'off' },
      generation: { strategy: 'snippet', llm: null },
      concurrency: { fast: 4, heavy: 2 },
    });
    fake.appUrl = app.url;

    // The issue is reproduced first, so every PR check has a stored test and runs containers at once.
    const issue = fake.addIssue(owner, repo, { title: fx.issue.title, body: fx.issue.body });
    await fake.deliver('issues', fake.issuePayload(owner, repo, issue.number, 'opened'));
    await app.services.queue.drain(30 * 60_000);
    log(`${mode}: issue reproduced; opening ${n} pull requests, one every ${intervalMs} ms`);

    // One head per PR: empty commits on top of the fix.
    const heads: string[] = [];
    let parent = published.goodFix;
    for (let i = 0; i < n; i++) {
      const env = { GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.invalid', GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.invalid' };
      parent = (await git(fx.dir, ['commit-tree', `${parent}^{tree}`, '-p', parent, '-m', `attempt ${i}`], { env })).trim();
      heads.push(parent);
      await fake.pushRef(owner, repo, fx.dir, parent, `refs/heads/attempt-${i}`);
    }
    const pulls = [];
    for (let i = 0; i < n; i++) pulls.push(await fake.addPull(owner, repo, { title: `Attempt ${i}`, body: `Fixes #${issue.number}`, headSha: heads[i]!, headRef: `attempt-${i}` }));
    const payloads = await Promise.all(pulls.map((p) => fake.pullPayload(owner, repo, p.number, 'opened')));

    const sent: Array<Promise<{ at: number; ms: number; busy: number }>> = [];
    for (let i = 0; i < n; i++) {
      const busy = (await app.services.queue.list({ kind: JOB.validate, state: 'running' })).length;
      sent.push(fake.deliver('pull_request', payloads[i]).then((r) => ({ at: r.at, ms: r.ms, busy })));
      await sleep(intervalMs);
    }
    const deliveries = await Promise.all(sent);
    const deadline = Date.now() + 10 * 60_000;
    const inProgressAt = async (head: string) => {
      for (;;) {
        const run = fake.checkRuns(owner, repo).find((c) => c.head_sha === head);
        const h = run?.history.find((x) => x.status === 'in_progress');
        if (h) return h.at;
        if (Date.now() > deadline) throw new Error(`no check run in progress for ${head}`);
        await sleep(20);
      }
    };
    const latencies: number[] = [];
    for (let i = 0; i < n; i++) latencies.push((await inProgressAt(heads[i]!)) - deliveries[i]!.at);

    // Done measuring: the queued checks are cancelled, the running ones end.
    for (const p of pulls) await app.services.queue.cancelGroup(prGroup({ owner, repo }, p.number));
    await app.services.queue.drain(30 * 60_000);

    const answers = deliveries.map((d) => d.ms);
    const busy = deliveries.slice(2).map((d) => d.busy);
    return {
      mode,
      deliveries: n,
      intervalMs,
      throttle,
      receiptToInProgressMs: { p50: round(quantile(latencies, 0.5)), p99: round(quantile(latencies, 0.99)), max: round(Math.max(...latencies)) },
      webhookAnswerMs: { p50: round(quantile(answers, 0.5)), p99: round(quantile(answers, 0.99)), max: round(Math.max(...answers)) },
      busyWorkers: { min: Math.min(...busy), max: Math.max(...busy) },
    };
  } finally {
    await app?.stop();
    await published?.cleanup();
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const n = Number(process.env.SWT_BENCH_DELIVERIES ?? 100);
  const ghes = await runMode('ghes', n, 250, false);
  log(`ghes: p50 ${ghes.receiptToInProgressMs.p50} ms, p99 ${ghes.receiptToInProgressMs.p99} ms`);
  const github = await runMode('github', Math.max(5, Math.round((n * 3) / 20)), 6000, true);
  log(`github: p50 ${github.receiptToInProgressMs.p50} ms, p99 ${github.receiptToInProgressMs.p99} ms`);
  const targetMs = 2000;
  const rows = [ghes, github].map(
    (r) =>
      `| ${r.mode} | ${r.throttle ? 'Probot default' : 'off'} | ${r.deliveries} every ${r.intervalMs} ms | ${r.busyWorkers.min}–${r.busyWorkers.max} | ${r.webhookAnswerMs.p50} / ${r.webhookAnswerMs.p99} ms | ${r.receiptToInProgressMs.p50} / ${r.receiptToInProgressMs.p99} ms | ${(r.receiptToInProgressMs.p99 / targetMs).toFixed(2)} |`,
  );
  process.stdout.write(
    [
      '| run | throttling | deliveries | busy workers | webhook answer p50 / p99 | receipt → in_progress p50 / p99 | p99 / 2 s target |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      JSON.stringify({ targetMs, ghes, github }),
      '',
    ].join('\n'),
  );
}

main().catch((e) => {
  process.stderr.write(`bench:app failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
