/**
 * How a delivery's job (event.ts decides) starts the work it decided on: say so at once (a
 * "started" comment on an issue, an in-progress check run on a PR), apply the limits, and return
 * the work, a reproduction or a validation, which `takeWork` makes this job (heavy lane: one queue
 * trip) or queues (fast lane). `swt reproduce|validate <URL>` starts its run here too.
 */
import { errorLine } from '../util/errors.js';
import { appSettings, type RepoConfig } from '../config/repoConfig.js';
import { approvalOf, gateConclusion } from '../github/decide.js';
import { closingIssueNumbers } from '../github/links.js';
import { CHECK_NAME, renderApprovalNotBound, renderBadConfigCheck, renderCheckProgress, renderJobError, renderLimitCheck, renderLimitReached, renderNoLinkedIssue, renderReproductionStarted, renderSuperseded } from '../github/render.js';
import { repoSlug, type GitHubPort, type PullData, type RepoRef, type Target } from '../github/types.js';
import type { JobRecord } from '../queue/queue.js';
import type { Logger } from '../util/logger.js';
import { modelRefused, refOf, type JobDeps } from './deps.js';
import { capLinks } from './limits.js';
import { issueGroup, JOB, prGroup, repoLimit, type Traced } from './payloads.js';
import type { ReproducePayload } from './reproduce.js';
import { limitHit } from './spend.js';
import type { ValidatePayload } from './validate.js';

export type StartRequest = Traced & {
  /** Who caused it (the webhook's sender): the per-author rate limit counts them. */
  sender?: string;
} & (
    | { type: 'issue'; target: Target; issue: number; config: RepoConfig; force?: string }
    | {
        type: 'pr';
        target: Target;
        pr: number;
        config: RepoConfig;
        /** The PR as the webhook showed it (saves a request); fetched when absent. */
        pull?: PullData;
        /**
         * A maintainer asked (`/swt validate [<sha>]`): the head it names, or else the head seen before
         * the comment was written (`at`, ms), is approved to install; a later push is not.
         */
        approval?: { at: number; sha?: string; by: string };
        /** A re-run: a fresh job even for a head already checked. */
        force?: string;
        /** The config is invalid: say so on the check and stop. */
        configError?: { message: string; headSha: string };
      }
  );
export type IssueStart = Extract<StartRequest, { type: 'issue' }>;
export type PullStart = Extract<StartRequest, { type: 'pr' }>;

/** Decided work: what the job that runs it carries, the key that runs it once, the group it supersedes in. */
export type Work = { key: string; group: string; limit: { key: string; max: number } } & (
  | { kind: typeof JOB.reproduce; payload: ReproducePayload }
  | { kind: typeof JOB.validate; payload: ValidatePayload }
);

export async function startIssue(d: JobDeps, p: IssueStart, log: Logger): Promise<Work | undefined> {
  const gh = await d.github(p.target);
  const r = refOf(p.target);
  const where = await gh.defaultBranch(r);
  // One reproduction per issue and default-branch sha, unless a maintainer asks again.
  const key = `reproduce:${repoSlug(r)}#${p.issue}@${where.sha}${p.force ? `:${p.force}` : ''}`;
  if (await d.queue.findByKey(key)) {
    log.info({ issue: p.issue, sha: where.sha }, 'issue already reproduced at this sha');
    return;
  }
  const refused = modelRefused(d, p.config);
  if (refused) {
    await gh.upsertComment(r, p.issue, 'reproduction', renderJobError('reproducing this issue', refused));
    return;
  }
  const hit = await limitHit(d, p.target, p.sender, Boolean(p.force));
  if (hit) {
    log.warn({ issue: p.issue, limit: hit }, 'a limit stops this reproduction');
    await gh.upsertComment(r, p.issue, 'limit', renderLimitReached(hit, 'reproducing this issue'));
    return;
  }
  if (appSettings(p.config).issues.comment_on_failure) await gh.upsertComment(r, p.issue, 'reproduction', renderReproductionStarted(where));
  return {
    kind: JOB.reproduce,
    payload: { target: p.target, issue: p.issue, config: p.config, ...where, delivery: p.delivery },
    key,
    group: issueGroup(p.target, p.issue),
    limit: repoLimit(p.target, d.settings.repoConcurrency),
  };
}

export async function startPull(d: JobDeps, p: PullStart, log: Logger): Promise<Work | undefined> {
  const { store } = d;
  const gh = await d.github(p.target);
  const r = refOf(p.target);
  if (p.configError) {
    const id = await gh.createCheckRun(r, p.configError.headSha, CHECK_NAME, { status: 'completed', conclusion: 'action_required', output: renderBadConfigCheck(p.configError.message), detailsUrl: `${d.gitBaseUrl}/${repoSlug(r)}/blob/HEAD/.github/swt.yml` });
    await store.saveCheckRun(r, p.configError.headSha, p.pr, id);
    return undefined;
  }
  const pull: PullData = p.pull ?? (await gh.getPull(r, p.pr));
  if (pull.state !== 'open') return undefined;
  const headSha = pull.head.sha;
  // When the App first saw this head: an approval reaches only heads seen before it was written. GitHub's
  // updated_at (set by the push) keeps a host clock behind GitHub's from dating a later push too early.
  const seenAt = await store.seeHead(r, pull.number, headSha, Math.max(Date.now(), pull.updatedAt ?? 0));
  // The first thing a PR author sees: the check is running. Links and approval come after.
  const existing = await store.checkRunFor(r, headSha);
  let checkId = p.force || existing === undefined ? undefined : existing;
  if (checkId === undefined) {
    checkId = await gh.createCheckRun(r, headSha, CHECK_NAME, { status: 'in_progress', output: renderCheckProgress('queued: finding the linked issues, then waiting for a free worker', []) });
    await store.saveCheckRun(r, headSha, pull.number, checkId);
  }
  const fromGraphql = await gh.closingIssues(r, pull.number).catch((e) => {
    log.warn({ pr: pull.number, err: errorLine(e) }, 'closingIssuesReferences failed; using the body only');
    return [] as number[];
  });
  // A body can name hundreds of issues: each may cost a reproduction, so one check covers a few.
  const links = capLinks([...new Set([...closingIssueNumbers(pull.body, r.owner, r.repo), ...fromGraphql])].sort((a, b) => a - b), d.limits.maxLinkedIssues);
  if (links.checked.length === 0) {
    await gh.updateCheckRun(r, checkId, { status: 'completed', conclusion: 'neutral', output: renderNoLinkedIssue() });
    return undefined;
  }
  // Whether a fork's head must wait is decided by the validation job, from the git diff of the fetched base and head.
  if (p.approval && pull.fork) {
    const a = approvalOf({ named: p.approval.sha, head: headSha, headSeenAt: seenAt, commentAt: p.approval.at });
    if (a.approve) await store.approve(r, pull.number, headSha);
    else {
      log.info({ pr: pull.number, headSha, by: p.approval.by, reason: a.reason }, 'approval not bound to this head');
      await gh.upsertComment(r, pull.number, 'notice', renderApprovalNotBound(p.approval.by, headSha, a.reason, p.approval.sha));
    }
  }
  return validation(d, { p, gh, r, pull, checkId, fresh: checkId !== existing, links }, log);
}

interface PullCheck {
  p: PullStart;
  gh: GitHubPort;
  r: RepoRef;
  pull: PullData;
  checkId: number;
  /** The check run was created for this job (not one of the same head reused). */
  fresh: boolean;
  links: { checked: number[]; left: number[] };
}

async function validation(d: JobDeps, { p, gh, r, pull, checkId, fresh, links }: PullCheck, log: Logger): Promise<Work | undefined> {
  const headSha = pull.head.sha;
  const key = `validate:${repoSlug(r)}#${pull.number}@${headSha}:${links.checked.join(',')}${p.force ? `:${p.force}` : ''}`;
  if (await d.queue.findByKey(key)) {
    log.info({ pr: pull.number, headSha }, 'this head with these links is already checked');
    return undefined;
  }
  const hit = await limitHit(d, p.target, p.sender, Boolean(p.force || p.approval));
  if (hit) {
    log.warn({ pr: pull.number, limit: hit }, 'a limit stops this check');
    // Unchecked is not passed: a gated author's PR must not get through the gate by exhausting a limit.
    const { conclusion } = gateConclusion(pull.author.login, false, appSettings(p.config).gate);
    await gh.updateCheckRun(r, checkId, { status: 'completed', conclusion, output: renderLimitCheck(hit) });
    await gh.upsertComment(r, pull.number, 'limit', renderLimitReached(hit, 'checking this pull request'));
    return undefined;
  }
  if (!fresh) {
    // The same head, other links (an edited description): a new check run for the new question.
    checkId = await gh.createCheckRun(r, headSha, CHECK_NAME, { status: 'in_progress', output: renderCheckProgress('queued: waiting for a free worker', links.checked) });
    await d.store.saveCheckRun(r, headSha, pull.number, checkId);
  }
  // (A fresh check run already says it is queued; the worker's first step names the issues. Every
  // write counts against GitHub's secondary rate limit, which Probot's throttling enforces.)
  return {
    kind: JOB.validate,
    payload: { target: p.target, pr: pull.number, config: p.config, headSha, issues: links.checked, ...(links.left.length ? { linksLeftOut: links.left } : {}), checkRunId: checkId, delivery: p.delivery },
    key,
    group: prGroup(p.target, pull.number),
    limit: repoLimit(p.target, d.settings.repoConcurrency),
  };
}

/**
 * Where decided work runs. A heavy-lane delivery job (`work`) becomes it and runs it next, in the
 * same job (true); a fast-lane one (a delivery its payload misjudged) queues it. Either way the
 * work's key runs it once (false when another job holds it), and a newer job of its group
 * supersedes the older ones, whose check runs are closed here.
 */
export async function takeWork(d: JobDeps, job: JobRecord, w: Work, log: Logger): Promise<boolean> {
  const here = job.kind === JOB.work;
  const r = here ? await d.queue.become(job.id, { kind: w.kind, payload: w.payload, key: w.key, group: w.group }) : await d.queue.enqueue<Work['payload']>(w);
  if ('taken' in r ? r.taken : !r.created) {
    log.info({ key: w.key }, 'this work is already taken by another job');
    return false;
  }
  if (w.kind === JOB.validate) await closeSuperseded(d, w.payload, r.superseded);
  return here;
}

/** A newer push, or a re-run: the older checks of the PR stop, and their check runs say why. */
async function closeSuperseded(d: JobDeps, p: ValidatePayload, ids: string[]): Promise<void> {
  const gh = ids.length ? await d.github(p.target) : undefined;
  for (const id of ids) {
    const old = await d.queue.get<Partial<ValidatePayload>>(id);
    const checkRunId = old?.kind === JOB.validate ? old.payload.checkRunId : undefined;
    if (checkRunId !== undefined && checkRunId !== p.checkRunId) {
      await gh!.updateCheckRun(refOf(p.target), checkRunId, { status: 'completed', conclusion: 'cancelled', output: renderSuperseded(p.headSha) });
    }
  }
}
