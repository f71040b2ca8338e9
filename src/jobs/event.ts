/**
 * A webhook as receiver.ts queued it, in either lane: `event` (fast) or `work` (heavy, jobs/work.ts).
 * Reads `.github/swt.yml` (github/config.ts), decides with the pure rules of github/decide.ts and
 * acts at once: a comment (help, refusal, a bad config), a ranking refresh or a merge to record, or
 * the start of the work (start.ts: "started" posted, limits applied), which a `work` job then runs itself.
 */
import { readRepoConfig, type ConfigRead } from '../github/config.js';
import { parseCommand, shouldReproduce, type IssueTrigger } from '../github/decide.js';
import { worthDeciding } from '../github/events.js';
import { issueDataOf, pullDataOf, type RawIssue, type RawPull } from '../github/port.js';
import { CHECK_NAME, renderConfigError, renderHelp, renderIssueTooLarge, renderRefusal, RERUN_ACTION } from '../github/render.js';
import { repoSlug, type GitHubPort, type MarkerKind, type Target } from '../github/types.js';
import type { JobContext } from '../queue/queue.js';
import type { Logger } from '../util/logger.js';
import { jobLog, refOf, writes, type JobDeps } from './deps.js';
import type { MergedPayload } from './merged.js';
import { HANDLED, JOB, type EventPayload } from './payloads.js';
import type { RankPayload } from './rank.js';
import { startIssue, startPull, takeWork, type PullStart, type Work } from './start.js';
import type { StatsPayload } from './stats.js';

/** One event being handled: its GitHub, where it happened, who caused it. */
interface Ev {
  d: JobDeps;
  gh: GitHubPort;
  target: Target;
  delivery: string;
  payload: any;
  /** Who caused it (the webhook's sender): the per-author rate limit counts them. */
  sender?: string;
  log: Logger;
}

export async function handle(d: JobDeps, ctx: JobContext<EventPayload>): Promise<void> {
  await decide(d, ctx);
}

/** Decides a delivery and acts on it; the work this job is to run next, when it is a `work` job that became it. */
export async function decide(d: JobDeps, { job }: JobContext<EventPayload>): Promise<Work | undefined> {
  const e = job.payload;
  const action = (e.payload as { action?: string }).action;
  const group = (Object.keys(HANDLED) as Array<keyof typeof HANDLED>).find((g) => (HANDLED[g] as readonly string[]).includes(`${e.name}.${action}`));
  if (!group || !worthDeciding(e.name, e.payload)) return undefined;
  const login = (e.payload as { sender?: { login?: unknown } }).sender?.login;
  const log = jobLog(d, job).child({ event: `${e.name}.${action}` });
  const work = await ROUTES[group]({ d, gh: await d.github(e.target), target: e.target, delivery: e.delivery ?? job.id, payload: e.payload, ...(typeof login === 'string' ? { sender: login } : {}), log });
  return work && (await takeWork(d, job, work, log)) ? work : undefined;
}

const notice = (ev: Ev, number: number, kind: MarkerKind, body: string) => ev.gh.upsertComment(refOf(ev.target), number, kind, body);
const configOf = (ev: Ev): Promise<ConfigRead> => readRepoConfig(ev.gh, refOf(ev.target));
type Decided = Promise<Work | undefined>;
const pullStart = (ev: Ev, p: Omit<PullStart, 'type' | 'target'>) => startPull(ev.d, { type: 'pr', target: ev.target, ...p, ...(ev.sender ? { sender: ev.sender } : {}), delivery: ev.delivery }, ev.log);

/** An issue opened, reopened or labelled: reproduce it when the rules say so. */
async function onIssue(ev: Ev): Decided {
  const p = ev.payload as { action: string; issue: RawIssue; label?: { name: string } };
  const trigger: IssueTrigger = p.action === 'labeled' ? { kind: 'labeled', label: p.label?.name ?? '' } : { kind: p.action as 'opened' | 'reopened' };
  const cfg = await configOf(ev);
  if ('error' in cfg) return void (await notice(ev, p.issue.number, 'notice', renderConfigError(cfg.error)));
  const facts = issueDataOf(p.issue);
  const d = shouldReproduce(trigger, facts, cfg.settings);
  if (!d.act) {
    ev.log.info({ issue: facts.number, reason: d.reason }, 'issue skipped');
    if (d.tell === 'too-large') await notice(ev, facts.number, 'notice', renderIssueTooLarge(facts.body.length));
    return undefined;
  }
  return startIssue(ev.d, { type: 'issue', target: ev.target, issue: facts.number, config: cfg.config, ...(ev.sender ? { sender: ev.sender } : {}), delivery: ev.delivery }, ev.log);
}

/** A `/swt` command in a comment: from a writer it starts what it asks; a reader is refused once per thread. */
async function onCommand(ev: Ev): Decided {
  const p = ev.payload as { comment: { id: number; body: string; user: { login: string; type: string }; created_at?: string }; issue: RawIssue };
  const cmd = parseCommand(p.comment.body);
  if (!cmd) return undefined;
  const facts = issueDataOf(p.issue);
  const cfg = await configOf(ev);
  if ('error' in cfg) return void (await notice(ev, facts.number, 'notice', renderConfigError(cfg.error)));
  if (!cfg.settings.events.commands) return undefined;
  const login = p.comment.user.login;
  if (!(await writes(ev.d, ev.gh, ev.target, login))) {
    if (await ev.d.store.claimRefusal(ev.target, facts.number)) await notice(ev, facts.number, 'refusal', renderRefusal(login));
    else ev.log.info({ thread: facts.number, user: login }, 'command by a reader: already refused on this thread');
    return undefined;
  }
  // Keyed on the comment, not the delivery: a replay of the same comment (a new delivery id) runs nothing more.
  const force = `comment:${repoSlug(ev.target)}#${p.comment.id}`;
  if (cmd.name === 'reproduce' && !facts.isPullRequest) {
    const d = shouldReproduce({ kind: 'command' }, facts, cfg.settings);
    if (d.act) return startIssue(ev.d, { type: 'issue', target: ev.target, issue: facts.number, config: cfg.config, force, ...(ev.sender ? { sender: ev.sender } : {}), delivery: ev.delivery }, ev.log);
    if (d.tell === 'too-large') await notice(ev, facts.number, 'notice', renderIssueTooLarge(facts.body.length));
    return undefined;
  }
  if (cmd.name === 'validate' && facts.isPullRequest) {
    const at = Date.parse(p.comment.created_at ?? '');
    return pullStart(ev, { pr: facts.number, config: cfg.config, approval: { at: Number.isFinite(at) ? at : 0, ...(cmd.sha ? { sha: cmd.sha } : {}), by: login }, force });
  }
  if (cmd.name === 'stats') {
    await ev.d.queue.enqueue<StatsPayload>({ kind: JOB.stats, payload: { target: ev.target, number: facts.number, delivery: ev.delivery }, key: `stats:${force}` });
    return undefined;
  }
  // help, an unknown word, or a command on the wrong kind of thread
  const note = cmd.name === 'unknown' ? { unknown: cmd.word } : cmd.name === 'help' ? undefined : { misplaced: cmd.name as 'reproduce' | 'validate' };
  await notice(ev, facts.number, 'notice', renderHelp(note));
  return undefined;
}

/** A PR opened, pushed to or its description edited: start its check. */
async function onPull(ev: Ev): Decided {
  const p = ev.payload as { pull_request: RawPull };
  const pull = pullDataOf(p.pull_request);
  const cfg = await configOf(ev);
  if ('error' in cfg) return pullStart(ev, { pr: pull.number, config: {}, pull, configError: { message: cfg.error, headSha: pull.head.sha } });
  if (!cfg.settings.events.pull_requests) return undefined;
  return pullStart(ev, { pr: pull.number, config: cfg.config, pull });
}

/** A PR closed: refresh the rankings it was in; a merged one is recorded for live accuracy. */
async function onClosed(ev: Ev): Decided {
  const { d, target, delivery } = ev;
  const p = ev.payload as { number: number; pull_request: RawPull & { merged?: boolean; merge_commit_sha?: string | null; merged_at?: string | null } };
  const issues = await d.store.closePull(target, p.number);
  if (issues.length) await d.queue.enqueue<RankPayload>({ kind: JOB.rank, payload: { target, issues, delivery }, key: `rank:${delivery}` });
  // A merged fix is ground truth for live accuracy: recorded and checked off the hot path.
  const merged = p.pull_request;
  if (!merged?.merged || !merged.merge_commit_sha) return undefined;
  const cfg = await configOf(ev);
  await d.queue.enqueue<MergedPayload>({
    kind: JOB.merged,
    payload: { target, pull: pullDataOf(merged), mergeSha: merged.merge_commit_sha, config: 'error' in cfg ? {} : cfg.config, mergedAt: merged.merged_at ? Date.parse(merged.merged_at) : Date.now(), delivery },
    key: `merged:${delivery}`,
  });
  return undefined;
}

/** A re-run asked on the check run: a fresh check of the same PR. */
async function onRerun(ev: Ev): Decided {
  const p = ev.payload as { action: string; check_run: { id: number; name: string; head_sha: string; pull_requests: Array<{ number: number }> }; requested_action?: { identifier: string } };
  if (p.check_run.name !== CHECK_NAME) return undefined;
  if (p.action === 'requested_action' && p.requested_action?.identifier !== RERUN_ACTION.identifier) return undefined;
  // A fork's check runs carry no pull_requests: the App remembers which PR a check run is for.
  const pr = p.check_run.pull_requests[0]?.number ?? (await ev.d.store.pullOfCheckRun(ev.target, p.check_run.id))?.pr;
  if (!pr) return void ev.log.warn({ checkRun: p.check_run.id }, 're-run of a check run whose pull request is unknown');
  const cfg = await configOf(ev);
  if ('error' in cfg) return pullStart(ev, { pr, config: {}, configError: { message: cfg.error, headSha: p.check_run.head_sha } });
  return pullStart(ev, { pr, config: cfg.config, force: ev.delivery });
}

/** Which handler answers each group of HANDLED. */
const ROUTES: Record<keyof typeof HANDLED, (ev: Ev) => Decided> = { issue: onIssue, command: onCommand, pull: onPull, closed: onClosed, rerun: onRerun };
