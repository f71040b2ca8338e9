/**
 * `swt demo --app`: the bundled fixture run through the GitHub App itself. The App serves on a
 * loopback port against the project's fake GitHub (as a GHES), receives the fixture's issue and
 * fix PR as signed webhooks, and what it posted is printed: the comment, the label, the check run.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { stringify } from 'yaml';
import { startApp } from '../app/app.js';
import { isLlmConfigured } from '../generation/index.js';
import { splitDiff } from '../patch/diffFiles.js';
import type { StrategyName } from '../generation/candidate.js';
import { silentProgress, type Progress } from '../pipeline/progress.js';
import { git } from '../repo/gitExec.js';
import type { Sandbox } from '../sandbox/types.js';
import { FakeGitHub } from './fakeGitHub.js';
import type { CheckRun } from './fakeGitHubModel.js';
import { createFixtureRepo, type FixtureName, type FixtureRepo } from './fixtureRepos.js';
import { processEnvironment, type Environment } from '../settings/index.js';

const GIT_ENV = { GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.invalid', GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.invalid' };

export interface PublishedFixture {
  fx: FixtureRepo;
  owner: string;
  repo: string;
  /** main: the fixture's base plus `.github/swt.yml`. */
  base: string;
  /** The fixture's own fix commit on top of base (branch fix). */
  goodFix: string;
  /** A change that fixes nothing: a comment in the file the fix changes (branch no-fix). */
  badFix: string;
  cleanup(): Promise<void>;
}

/** `.github/swt.yml` for a fixture: its image, install and test command, plus `extra` keys. */
export function fixtureConfig(fx: FixtureRepo, extra: Record<string, unknown> = {}): string {
  return stringify({ image: fx.instance.image, install: fx.instance.install, test_command: fx.instance.test_cmd, ...extra });
}

/** Builds the fixture's repository (base with config, a correct and an incorrect fix) on the fake GitHub. */
export async function publishFixture(fake: FakeGitHub, name: FixtureName, opts: { owner?: string; repo?: string; config?: (fx: FixtureRepo) => string } = {}): Promise<PublishedFixture> {
  const fx = await createFixtureRepo(name);
  try {
    const run = async (...args: string[]) => (await git(fx.dir, args, { env: GIT_ENV })).trim();
    await run('checkout', '-q', fx.base);
    await mkdir(join(fx.dir, '.github'), { recursive: true });
    await writeFile(join(fx.dir, '.github', 'swt.yml'), (opts.config ?? fixtureConfig)(fx));
    await run('add', '-A');
    await run('commit', '-q', '-m', 'Configure swt-bot');
    const base = await run('rev-parse', 'HEAD');
    await run('cherry-pick', '--allow-empty', fx.head);
    const goodFix = await run('rev-parse', 'HEAD');
    await run('checkout', '-q', base);
    const fixed = splitDiff(fx.instance.patch)[0]!.path;
    const file = join(fx.dir, fixed);
    const comment = extname(fixed) === '.py' ? '# TODO: handle more input' : '// TODO: handle more input';
    await writeFile(file, `${(await readFile(file, 'utf8')).trimEnd()}\n${comment}\n`);
    await run('commit', '-q', '-am', 'Handle more input');
    const badFix = await run('rev-parse', 'HEAD');
    await run('checkout', '-q', base);
    const owner = opts.owner ?? 'acme';
    const repo = opts.repo ?? name;
    await fake.addRepo(owner, repo, fx.dir);
    await fake.pushRef(owner, repo, fx.dir, goodFix, 'refs/heads/fix');
    await fake.pushRef(owner, repo, fx.dir, badFix, 'refs/heads/no-fix');
    return { fx, owner, repo, base, goodFix, badFix, cleanup: () => fx.cleanup() };
  } catch (e) {
    await fx.cleanup();
    throw e;
  }
}

export function newAppKey(): string {
  return generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
}

export interface AppDemoResult {
  strategy: string;
  issueComment: string;
  labels: string[];
  checkRun: CheckRun | undefined;
  prComment: string;
  /** Every REST, GraphQL and git call the App made to the fake GitHub. */
  calls: number;
  text: string;
}

export async function runAppDemo(sandbox: Sandbox, opts: { fixture?: FixtureName; strategy?: StrategyName; env?: Environment } = {}, progress: Progress = silentProgress): Promise<AppDemoResult> {
  const name = opts.fixture ?? 'py-durations';
  const llm = isLlmConfigured(opts.env);
  const strategy: StrategyName = opts.strategy ?? (llm ? 'ensemble' : 'snippet');
  const secret = 'swt-demo-webhook-secret';
  const key = newAppKey();
  const fake = await new FakeGitHub({ webhookSecret: secret, appPrivateKey: key }).start();
  const dataDir = await mkdtemp(join(tmpdir(), 'swt-appdemo-'));
  let published: PublishedFixture | undefined;
  let app: Awaited<ReturnType<typeof startApp>> | undefined;
  try {
    progress.step(`fake GitHub (GHES) at ${fake.url}`);
    published = await publishFixture(fake, name, { config: (fx) => fixtureConfig(fx, { generation: { strategy } }) });
    const { owner, repo } = published;
    app = await startApp({
      appId: fake.appId,
      privateKey: key,
      secret,
      dataDir,
      sandbox,
      env: { ...(opts.env ?? processEnvironment()), GHE_HOST: fake.host, GHE_PROTOCOL: 'http' },
      generation: llm ? { strategy } : { strategy, llm: null },
      progressIntervalMs: 1000,
    });
    fake.appUrl = app.url;
    progress.step(`the App listens at ${app.url}, pointed at the fake GitHub`);

    // Each webhook's jobs finish before the next is delivered, as a person would see them.
    const deliver = async (event: string, payload: unknown) => {
      await fake.deliver(event, payload);
      await app!.services.queue.drain(30 * 60_000);
    };
    const issue = fake.addIssue(owner, repo, { title: published.fx.issue.title, body: published.fx.issue.body });
    progress.step(`webhook issues.opened for #${issue.number}: ${issue.title}`);
    await deliver('issues', fake.issuePayload(owner, repo, issue.number, 'opened'));

    const pr = await fake.addPull(owner, repo, { title: `Fix #${issue.number}`, body: `Fixes #${issue.number}`, user: { login: 'contributor', type: 'User' }, headSha: published.goodFix, headRef: 'fix' });
    progress.step(`webhook pull_request.opened for #${pr.number} (head ${published.goodFix.slice(0, 7)})`);
    await deliver('pull_request', await fake.pullPayload(owner, repo, pr.number, 'opened'));

    const comments = (n: number) => fake.issue(owner, repo, n).comments.map((c) => c.body).join('\n\n');
    const r = { strategy, issueComment: comments(issue.number), labels: fake.issue(owner, repo, issue.number).labels, checkRun: fake.checkRuns(owner, repo).find((c) => c.head_sha === published!.goodFix), prComment: comments(pr.number), calls: fake.calls.length };
    return { ...r, text: demoText(r, issue.number, pr.number) };
  } finally {
    await app?.stop();
    await published?.cleanup();
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** What the App posted, as `swt demo --app` prints it. */
function demoText(p: Omit<AppDemoResult, 'text'>, issue: number, pr: number): string {
  const run = p.checkRun;
  return [
    `## The App's comment on issue #${issue}`,
    '',
    p.issueComment,
    '',
    `## Labels on issue #${issue}: ${p.labels.join(', ') || '(none)'}`,
    '',
    `## Check run "${run?.name}" on pull request #${pr}: ${run?.status}${run?.conclusion ? `, ${run.conclusion}` : ''}`,
    '',
    `**${run?.output?.title ?? ''}**`,
    '',
    run?.output?.summary ?? '',
    '',
    `## The App's comment on pull request #${pr}`,
    '',
    p.prComment,
    '',
    `(${p.calls} calls to the fake GitHub: REST, GraphQL and git over HTTP)`,
  ].join('\n');
}
