/**
 * What the App does with an event: pure decisions over a few facts of the payload and the
 * repository's settings. The handlers only gather the facts and act on the answer.
 */
import type { AppSettings } from '../config/repoConfig.js';
import type { HeadInstall } from '../pipeline/validate.js';
import type { CheckConclusion, IssueOutcome } from './outcome.js';
import { COMMAND_LINE, isBotAccount } from './events.js';
import { visibleText } from './markdown.js';

/** GitHub's own limit for an issue body; longer text is refused with a message, never read. */
export const MAX_ISSUE_BODY = 65_536;

export interface IssueFacts {
  number: number;
  title: string;
  body: string;
  author: { login: string; type: string };
  locked: boolean;
  labels: string[];
  /** issue_comment events fire for PRs too. */
  isPullRequest: boolean;
}

export type IssueTrigger = { kind: 'opened' | 'reopened' } | { kind: 'labeled'; label: string } | { kind: 'command' };

export type Decision = { act: true } | { act: false; reason: string; /** Said on the thread, when silence would leave the user guessing. */ tell?: 'too-large' };

export { isBotAccount };

const QUESTION_START = /^\s*(\[?(question|feature( request)?|proposal|rfc|discussion|idea)\]?\s*[:\]-]|how\b|why\b|what\b|which\b|is there\b|is it possible\b|can (i|you|we)\b|could (i|you|we)\b|should\b|feat(ure)?[:(])/i;

/** The simple rule: a title that ends with `?` or starts like a question or a feature request. */
export function readsAsQuestion(title: string): boolean {
  return /\?\s*$/.test(title) || QUESTION_START.test(title) || /\bfeature request\b/i.test(title);
}

/** Should an issue event start a reproduction? Noise control applies to automatic triggers only. */
export function shouldReproduce(trigger: IssueTrigger, issue: IssueFacts, s: AppSettings): Decision {
  if (issue.isPullRequest) return { act: false, reason: 'a pull request, not an issue' };
  if (trigger.kind !== 'command' && !s.events.issues) return { act: false, reason: 'events.issues is off' };
  if (trigger.kind === 'labeled' && trigger.label.toLowerCase() !== s.issues.trigger_label.toLowerCase()) {
    return { act: false, reason: `label "${trigger.label}" is not the trigger label` };
  }
  if (issue.body.length > MAX_ISSUE_BODY) return { act: false, reason: `the body has ${issue.body.length} characters`, tell: 'too-large' };
  if (trigger.kind === 'opened' || trigger.kind === 'reopened') {
    if (!s.issues.auto) return { act: false, reason: 'issues.auto is off: only the trigger label or /swt reproduce' };
    if (isBotAccount(issue.author)) return { act: false, reason: `opened by a bot (${issue.author.login})` };
    if (issue.locked) return { act: false, reason: 'the issue is locked' };
    const skip = new Set(s.issues.skip_labels.map((l) => l.toLowerCase()));
    const hit = issue.labels.find((l) => skip.has(l.toLowerCase()));
    if (hit) return { act: false, reason: `labelled "${hit}"` };
    if (s.issues.skip_questions && readsAsQuestion(issue.title)) return { act: false, reason: 'the title reads as a question or a feature request' };
  }
  return { act: true };
}

export const COMMANDS = ['reproduce', 'validate', 'stats', 'help'] as const;
export type CommandName = (typeof COMMANDS)[number];
/** `/swt validate <sha>` names the head a maintainer approves (7 to 40 hex digits of it). */
export type Command = { name: Exclude<CommandName, 'validate'> } | { name: 'validate'; sha?: string } | { name: 'unknown'; word: string };

/**
 * The first `/swt <word> [<sha>]` at the start of a line a reader sees as text; null when the
 * comment holds none. One in an HTML comment, a code block or a quote is not a command: a
 * maintainer who pastes someone's text must not approve a head by a line they cannot see.
 */
export function parseCommand(body: string | null | undefined): Command | null {
  // Most comments hold no such line at all: only those are parsed as Markdown.
  const m = body && COMMAND_LINE.test(body) ? COMMAND_LINE.exec(visibleText(body)) : null;
  if (!m) return null;
  const word = (m[1] ?? 'help').toLowerCase();
  const arg = m[2];
  if (word === 'validate' && arg !== undefined) return /^[0-9a-f]{7,40}$/i.test(arg) ? { name: 'validate', sha: arg.toLowerCase() } : { name: 'unknown', word: `validate ${arg.slice(0, 50)}` };
  if (arg !== undefined) return { name: 'unknown', word: `${word} ${arg.slice(0, 50)}` };
  return (COMMANDS as readonly string[]).includes(word) ? ({ name: word } as Command) : { name: 'unknown', word };
}

/**
 * Permission levels (from the collaborator permission API) that allow commands. author_association
 * is not asked: by GitHub's own meaning MEMBER and COLLABORATOR include read-only people.
 */
export function permissionGrantsWrite(permission: string | undefined): boolean {
  return ['admin', 'maintain', 'write'].includes((permission ?? '').toLowerCase());
}

/** `*` matches any run of characters; case-insensitive, like GitHub logins. */
export function matchesAuthor(login: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    const re = new RegExp(`^${p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i');
    return re.test(login);
  });
}


/** The gate: gated authors fail unless the fix filter passes; others get neutral (or failure in mode `all`). */
export function gateConclusion(author: string, filterPasses: boolean, gate: AppSettings['gate']): { conclusion: CheckConclusion; gated: boolean } {
  const gated = gate.mode === 'all' || (gate.mode === 'authors' && matchesAuthor(author, gate.authors));
  if (filterPasses) return { conclusion: 'success', gated };
  return { conclusion: gated ? 'failure' : 'neutral', gated };
}

/**
 * A fork's PR whose head differs from its base in dependency manifests or test machinery waits for
 * a maintainer before anything is installed or run from it. `manifests` and `machinery` come from
 * the paths git finds changed from the base commit to the head commit (pipeline/headChanges.ts, the
 * same diff that decides whether the head gets its own install and which test machinery it runs
 * with), not GitHub's list of the PR's own changes: that one leaves out what the base changed since
 * the fork branched, and stops at 3,000 files.
 */
export function needsApproval(pr: { fork: boolean; manifests: string[]; machinery: string[]; approved: boolean }): { manifests: string[]; machinery: string[] } | null {
  if (!pr.fork || pr.approved) return null;
  // A file both (a pyproject.toml whose pytest section changed) is listed once, as a manifest.
  const machinery = pr.machinery.filter((m) => !pr.manifests.includes(m));
  return pr.manifests.length || machinery.length ? { manifests: pr.manifests, machinery } : null;
}

/**
 * Which head a `/swt validate` approves: the head the App knew before the comment was written
 * (first seen at or before it), and when the comment names a sha, only if that is it. A head pushed
 * after the comment needs a new approval: the maintainer cannot have seen it. Only a full 40-digit
 * sha approves a head first seen later (a short prefix can be matched by a crafted commit).
 */
export function approvalOf(a: { named?: string; head: string; headSeenAt: number; commentAt: number }): { approve: true } | { approve: false; reason: 'other-head' | 'pushed-after' } {
  if (a.named && !a.head.toLowerCase().startsWith(a.named.toLowerCase())) return { approve: false, reason: 'other-head' };
  if (a.named?.length === 40) return { approve: true };
  return a.headSeenAt <= a.commentAt ? { approve: true } : { approve: false, reason: 'pushed-after' };
}

/**
 * Who vouches for the head's own install (when its manifests differ from base's): a branch of the
 * repository itself was pushed by someone with write access; a fork's head needs the approval.
 */
export function headInstallOf(pr: { fork: boolean; approved: boolean; authorWrites: boolean }): HeadInstall {
  if (!pr.fork) return pr.authorWrites ? 'writer' : 'other';
  return pr.approved ? 'other' : 'refused';
}

/** The fix filter over every linked issue: each one reproduced passes, none errored, at least one ran. */
export function fixFilterPasses(outcomes: readonly IssueOutcome[]): boolean {
  const validated = outcomes.filter((o) => o.kind === 'validated');
  return validated.length > 0 && outcomes.every((o) => o.kind !== 'error') && validated.every((o) => o.validation.likelyCorrect);
}
