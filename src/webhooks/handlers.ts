/**
 * The webhooks, as a worker's fast lane handles them once receiver.ts has queued them: with the
 * installation's Octokit in a Probot Context, it reads and validates `.github/swt.yml` (through
 * `context.config`, so an org's `_extends` works), decides with the pure rules of decide.ts, and
 * enqueues the acknowledgements, notices and checks.
 */
import { Context, type Probot } from 'probot';
import { YAMLParseError } from 'yaml';
import { appSettings, checkRepoConfig, CONFIG_PATH, type AppSettings, type RepoConfig } from '../config/repoConfig.js';
import { JOB, type EventPayload } from '../jobs/payloads.js';
import type { JobQueue } from '../queue/queue.js';
import { isSwtError } from '../util/errors.js';
import { isBotAccount, parseCommand, shouldReproduce, type IssueTrigger } from '../github/decide.js';
import { WriteAccess } from '../github/permissions.js';
import { issueDataOf, pullDataOf, type RawIssue, type RawPull } from '../github/port.js';
import { targetOfPayload } from './receiver.js';
import { CHECK_NAME, renderConfigError, renderHelp, renderIssueTooLarge, renderRefusal, RERUN_ACTION } from '../github/render.js';
import { repoSlug, type Target } from '../github/types.js';
import type { AckPayload } from '../jobs/ack.js';
import type { NoticePayload } from '../jobs/notice.js';
import type { RankPayload } from '../jobs/rank.js';
import type { MergedPayload } from '../jobs/merged.js';
import type { StatsPayload } from '../jobs/stats.js';

/** What the handlers remember (the App's Store implements it). */
export interface HandlerStore {
  claimRefusal(r: { owner: string; repo: string }, thread: number): Promise<boolean>;
  pullOfCheckRun(r: { owner: string; repo: string }, checkRunId: number): Promise<{ pr: number; headSha: string } | undefined>;
  closePull(r: { owner: string; repo: string }, pr: number): Promise<number[]>;
}

export interface HandlerDeps {
  queue: JobQueue;
  store: HandlerStore;
  /** Events handled at once by this process's fast lane (default 4). */
  concurrency?: number;
}

type AnyContext = Context;

/** The receiver queued only events that name their repository. */
function targetOf(ctx: AnyContext): Target {
  return targetOfPayload(ctx.payload)!;
}

/** Who caused the event: the per-author rate limit counts them. */
function senderOf(ctx: AnyContext): { sender?: string } {
  const login = (ctx.payload as { sender?: { login?: unknown } }).sender?.login;
  return typeof login === 'string' ? { sender: login } : {};
}

type ConfigRead = { config: RepoConfig; settings: AppSettings } | { error: string };

/** `.github/swt.yml` of the default branch, merged with `_extends`, validated; an error names the key. */
export async function readConfig(ctx: AnyContext): Promise<ConfigRead> {
  try {
    const raw = await ctx.config<Record<string, unknown>>('swt.yml');
    const config = checkRepoConfig(raw ?? {});
    return { config, settings: appSettings(config) };
  } catch (e) {
    const error = configReadError(e);
    if (error === undefined) throw e;
    return { error };
  }
}

/** The one-line message for a config that cannot be read (bad YAML, a wrong key, a bad `_extends`); undefined for other errors. */
export function configReadError(e: unknown): string | undefined {
  if (isSwtError(e, 'BAD_CONFIG')) return e.message;
  const cause = (e as Error)?.cause;
  if (cause instanceof YAMLParseError) {
    const line = cause.linePos ? `:${cause.linePos[0].line}` : '';
    return `${CONFIG_PATH}${line}: not valid YAML (${cause.message.split('\n')[0]!.replace(/:$/, '')})`;
  }
  const message = (e as Error)?.message ?? '';
  if (message.startsWith('[@probot/octokit-plugin-config]')) return `${CONFIG_PATH}: ${message.replace(/^\[[^\]]+\]\s*/, '')}`;
  return undefined;
}

/** Every webhook the App acts on; app.yml subscribes to exactly these events. */
export const HANDLED = {
  issue: ['issues.opened', 'issues.reopened', 'issues.labeled'],
  command: ['issue_comment.created'],
  pull: ['pull_request.opened', 'pull_request.synchronize', 'pull_request.reopened', 'pull_request.edited'],
  closed: ['pull_request.closed'],
  rerun: ['check_run.rerequested', 'check_run.requested_action'],
} as const;

/** The same, as `event.action` names: what the receiver queues. */
export const HANDLED_EVENTS: ReadonlySet<string> = new Set(Object.values(HANDLED).flat());

/** What the handlers share: where they enqueue, what they remember, whom they asked about write access. */
interface Handlers {
  queue: JobQueue;
  store: HandlerStore;
  // Write access as GitHub's permission API says it (kept a minute).
  writeAccess: WriteAccess;
}

const notice = (h: Handlers, ctx: AnyContext, number: number, kind: NoticePayload['kind'], body: string) =>
  h.queue.enqueue<NoticePayload>({ kind: JOB.notice, payload: { target: targetOf(ctx), number, kind, body, delivery: ctx.id }, key: `notice:${ctx.id}` });

// A forced run (a command) is keyed on what it answers: a redelivered or replayed comment runs once.
const ackIssue = (h: Handlers, ctx: AnyContext, issue: number, config: RepoConfig, force?: string) =>
  h.queue.enqueue<AckPayload>({ kind: JOB.ack, payload: { type: 'issue', target: targetOf(ctx), issue, config, ...(force ? { force } : {}), ...senderOf(ctx), delivery: ctx.id }, key: `ack:${force ?? ctx.id}` });

const ackPull = (h: Handlers, ctx: AnyContext, payload: Omit<Extract<AckPayload, { type: 'pr' }>, 'type' | 'target'>) =>
  h.queue.enqueue<AckPayload>({ kind: JOB.ack, payload: { type: 'pr', target: targetOf(ctx), ...payload, ...senderOf(ctx), delivery: ctx.id }, key: `ack:${payload.force ?? ctx.id}` });

/** An issue opened, reopened or labelled: reproduce it when the rules say so. */
async function onIssue(h: Handlers, ctx: AnyContext): Promise<void> {
  const p = ctx.payload as { action: string; issue: RawIssue; label?: { name: string } };
  const trigger: IssueTrigger = p.action === 'labeled' ? { kind: 'labeled', label: p.label?.name ?? '' } : { kind: p.action as 'opened' | 'reopened' };
  const cfg = await readConfig(ctx);
  if ('error' in cfg) {
    await notice(h, ctx, p.issue.number, 'notice', renderConfigError(cfg.error));
    return;
  }
  const facts = issueDataOf(p.issue);
  const d = shouldReproduce(trigger, facts, cfg.settings);
  if (!d.act) {
    ctx.log.info({ issue: facts.number, reason: d.reason }, 'issue skipped');
    if (d.tell === 'too-large') await notice(h, ctx, facts.number, 'notice', renderIssueTooLarge(facts.body.length));
    return;
  }
  await ackIssue(h, ctx, facts.number, cfg.config);
}

/** A `/swt` command in a comment: from a writer it queues what it asks; a reader is refused once per thread. */
async function onCommand(h: Handlers, ctx: AnyContext): Promise<void> {
  const p = ctx.payload as {
    comment: { id: number; body: string; user: { login: string; type: string }; created_at?: string };
    issue: RawIssue;
  };
  const cmd = parseCommand(p.comment.body);
  if (!cmd || isBotAccount(p.comment.user)) return;
  const target = targetOf(ctx);
  const facts = issueDataOf(p.issue);
  const cfg = await readConfig(ctx);
  if ('error' in cfg) {
    await notice(h, ctx, facts.number, 'notice', renderConfigError(cfg.error));
    return;
  }
  if (!cfg.settings.events.commands) return;
  const login = p.comment.user.login;
  const allowed = await h.writeAccess.writes({ installationId: (ctx.payload as { installation?: { id: number } }).installation?.id, ...target, login }, () => permissionOf(ctx, target, login));
  if (!allowed) {
    if (await h.store.claimRefusal(target, facts.number)) await notice(h, ctx, facts.number, 'refusal', renderRefusal(p.comment.user.login));
    else ctx.log.info({ thread: facts.number, user: p.comment.user.login }, 'command by a reader: already refused on this thread');
    return;
  }
  // Keyed on the comment, not the delivery: a replay of the same comment (a new delivery id) runs nothing more.
  const force = `comment:${repoSlug(target)}#${p.comment.id}`;
  if (cmd.name === 'reproduce' && !facts.isPullRequest) {
    const d = shouldReproduce({ kind: 'command' }, facts, cfg.settings);
    if (d.act) await ackIssue(h, ctx, facts.number, cfg.config, force);
    else if (d.tell === 'too-large') await notice(h, ctx, facts.number, 'notice', renderIssueTooLarge(facts.body.length));
    return;
  }
  if (cmd.name === 'validate' && facts.isPullRequest) {
    const at = Date.parse(p.comment.created_at ?? '');
    await ackPull(h, ctx, { pr: facts.number, config: cfg.config, approval: { at: Number.isFinite(at) ? at : 0, ...(cmd.sha ? { sha: cmd.sha } : {}), by: login }, force });
    return;
  }
  if (cmd.name === 'stats') {
    await h.queue.enqueue<StatsPayload>({ kind: JOB.stats, payload: { target, number: facts.number, delivery: ctx.id }, key: `stats:${force}` });
    return;
  }
  // help, an unknown word, or a command on the wrong kind of thread
  const note = cmd.name === 'unknown' ? { unknown: cmd.word } : cmd.name === 'help' ? undefined : { misplaced: cmd.name as 'reproduce' | 'validate' };
  await notice(h, ctx, facts.number, 'notice', renderHelp(note));
}

/** A PR opened, pushed to or its description edited: queue its check. */
async function onPull(h: Handlers, ctx: AnyContext): Promise<void> {
  const p = ctx.payload as { action: string; pull_request: RawPull; changes?: { body?: unknown } };
  // A title edit changes nothing we check; a body edit may link other issues.
  if (p.action === 'edited' && !p.changes?.body) return;
  const pull = pullDataOf(p.pull_request);
  const cfg = await readConfig(ctx);
  if ('error' in cfg) {
    await ackPull(h, ctx, { pr: pull.number, config: {}, pull, configError: { message: cfg.error, headSha: pull.head.sha } });
    return;
  }
  if (!cfg.settings.events.pull_requests) return;
  await ackPull(h, ctx, { pr: pull.number, config: cfg.config, pull });
}

/** A PR closed: refresh the rankings it was in; a merged one is recorded for live accuracy. */
async function onClosed(h: Handlers, ctx: AnyContext): Promise<void> {
  const p = ctx.payload as { number: number; pull_request: RawPull & { merged?: boolean; merge_commit_sha?: string | null; merged_at?: string | null } };
  const issues = await h.store.closePull(targetOf(ctx), p.number);
  if (issues.length) await h.queue.enqueue<RankPayload>({ kind: JOB.rank, payload: { target: targetOf(ctx), issues, delivery: ctx.id }, key: `rank:${ctx.id}` });
  // A merged fix is ground truth for live accuracy: recorded and checked off the hot path.
  const merged = p.pull_request;
  if (merged?.merged && merged.merge_commit_sha) {
    const cfg = await readConfig(ctx);
    await h.queue.enqueue<MergedPayload>({
      kind: JOB.merged,
      payload: {
        target: targetOf(ctx),
        pull: pullDataOf(merged),
        mergeSha: merged.merge_commit_sha,
        config: 'error' in cfg ? {} : cfg.config,
        mergedAt: merged.merged_at ? Date.parse(merged.merged_at) : Date.now(),
        delivery: ctx.id,
      },
      key: `merged:${ctx.id}`,
    });
  }
}

/** A re-run asked on the check run: a fresh check of the same PR. */
async function onRerun(h: Handlers, ctx: AnyContext): Promise<void> {
  const p = ctx.payload as { action: string; check_run: { id: number; name: string; head_sha: string; pull_requests: Array<{ number: number }> }; requested_action?: { identifier: string } };
  if (p.check_run.name !== CHECK_NAME) return;
  if (p.action === 'requested_action' && p.requested_action?.identifier !== RERUN_ACTION.identifier) return;
  const target = targetOf(ctx);
  // A fork's check runs carry no pull_requests: the App remembers which PR a check run is for.
  const pr = p.check_run.pull_requests[0]?.number ?? (await h.store.pullOfCheckRun(target, p.check_run.id))?.pr;
  if (!pr) {
    ctx.log.warn({ checkRun: p.check_run.id }, 're-run of a check run whose pull request is unknown');
    return;
  }
  const cfg = await readConfig(ctx);
  if ('error' in cfg) {
    await ackPull(h, ctx, { pr, config: {}, configError: { message: cfg.error, headSha: p.check_run.head_sha } });
    return;
  }
  await ackPull(h, ctx, { pr, config: cfg.config, force: ctx.id });
}

/** Which handler answers each group of HANDLED. */
const ROUTES: Record<keyof typeof HANDLED, (h: Handlers, ctx: AnyContext) => Promise<void>> = { issue: onIssue, command: onCommand, pull: onPull, closed: onClosed, rerun: onRerun };

export function registerHandlers(app: Probot, deps: HandlerDeps): void {
  const h: Handlers = { queue: deps.queue, store: deps.store, writeAccess: new WriteAccess() };
  const routes = new Map<string, (ctx: AnyContext) => Promise<void>>();
  for (const [group, names] of Object.entries(HANDLED)) {
    for (const n of names) routes.set(n, (ctx) => ROUTES[group as keyof typeof HANDLED](h, ctx));
  }

  // The event as Probot's handlers see it, with the installation's Octokit.
  deps.queue.work<EventPayload>(
    JOB.event,
    async ({ job }) => {
      const e = job.payload;
      const action = (e.payload as { action?: string }).action;
      const fn = routes.get(`${e.name}.${action}`);
      if (!fn) return;
      const octokit = await app.auth(e.installationId);
      const ctx = new Context({ id: e.delivery ?? job.id, name: e.name, payload: e.payload } as never, octokit, app.log.child({ job: job.id, delivery: e.delivery, event: `${e.name}.${action}` }));
      await fn(ctx as AnyContext);
    },
    { concurrency: deps.concurrency ?? 4 },
  );
}

async function permissionOf(ctx: AnyContext, target: Target, login: string): Promise<string> {
  try {
    const { data } = await ctx.octokit.rest.repos.getCollaboratorPermissionLevel({ owner: target.owner, repo: target.repo, username: login });
    return data.permission;
  } catch (e) {
    if ((e as { status?: number }).status === 404) return 'none';
    throw e;
  }
}
