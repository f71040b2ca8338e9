/**
 * Everything the App posts, as pure functions of data: issue comments, check-run output and
 * annotations, the PR comment, the ranking table, refusals and help.
 *
 * Two rules hold throughout: text a model wrote (tests, reasons) appears only inside fenced
 * blocks or code spans, and nothing is said that a real run did not establish.
 */
import { parsePatch } from 'diff';
import { describeCoverage } from '../coverage/describe.js';
import type { Reproduction } from '../generation/types.js';
import { renderVerdictMarkdown } from '../harness/render.js';
import { diffPath } from '../patch/fileNames.js';
import { percent, usd, type LiveAccuracyRow } from '../pipeline/liveAccuracy.js';
import { CANDIDATE_VERDICT_TEXT, type Candidate } from '../pipeline/rank.js';
import { COMMANDS, MAX_ISSUE_BODY } from './decide.js';
import type { CheckConclusion, IssueOutcome } from './outcome.js';
import type { MarkerKind } from './types.js';

export const CHECK_NAME = 'swt: reproduction';
/** The check run's "Re-run" button (identifier: at most 20 characters). */
export const RERUN_ACTION = { label: 'Re-run', description: 'Run the reproduction check again', identifier: 'swt-rerun' } as const;
/** Check-run `output.summary` and `output.text` are limited to 65 535 characters each. */
const OUTPUT_LIMIT = 65_000;
/** GitHub refuses an issue or PR comment longer than this. */
export const COMMENT_LIMIT = 65_536;
/** …and a check run's `output.summary` or `output.text` longer than this, its title longer than 255. */
export const CHECK_TEXT_LIMIT = 65_535;
/** The reproducing test shown in a comment: room for the rest of the comment within COMMENT_LIMIT. */
const TEST_PATCH_SHOWN = 50_000;


/** Where the whole of a clipped text can be read. */
export const WHOLE_TEXT_WHERE = "the whole is kept by swt-bot: its operator's status page lists the job (`/swt`), and the stored reproducing test is served at `/swt/reproduction/<owner>/<repo>/<issue>` (with the status token)";

/**
 * Text cut to GitHub's limit, saying so, how much was shown and where the whole is. Pure; the
 * result is never longer than `limit`.
 */
export function clipText(text: string, limit: number, where = WHOLE_TEXT_WHERE): string {
  if (text.length <= limit) return text;
  const note = `\n\n_…clipped to GitHub's limit of ${limit.toLocaleString('en-US')} characters (${text.length.toLocaleString('en-US')} in all); ${where}._`;
  if (note.length >= limit) return text.slice(0, limit);
  return text.slice(0, limit - note.length) + note;
}

/** The hidden first line by which the App finds its own comment again and edits it in place. */
export function marker(kind: MarkerKind): string {
  return `<!-- swt-bot:${kind} -->`;
}

export function markerOf(body: string | null | undefined): MarkerKind | null {
  const m = /^<!-- swt-bot:([a-z]+) -->/.exec(body ?? '');
  return (m?.[1] as MarkerKind | undefined) ?? null;
}

const short = (sha: string) => sha.slice(0, 7);

/** A fence longer than any backtick run inside, so test code cannot break out of it. */
export function fence(body: string, lang: string): string {
  const longest = Math.max(2, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${lang}\n${body.replace(/\n$/, '')}\n${ticks}`;
}

/** Inline text from users (issue titles): no HTML, no line breaks. */
function inline(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'));
}

function usageLine(rep: Pick<Reproduction, 'strategy' | 'usage'>): string {
  const u = rep.usage;
  const tokens = u.promptTokens + u.completionTokens;
  return `Strategy \`${rep.strategy}\` · ${(u.wallMs / 1000).toFixed(1)} s · LLM cost $${u.costUsd.toFixed(4)} (${tokens} tokens)`;
}

/** Whether a model wrote the test (not the snippet strategy, which needs none). */
function byModel(rep: Pick<Reproduction, 'strategy'>): boolean {
  return !/^(ensemble\()?snippet\)?$/.test(rep.strategy);
}

/** A small model on the bot's own machine wrote it: readers should know (and weigh the test with that). */
function localModelLine(rep: Pick<Reproduction, 'strategy' | 'model' | 'status'>): string[] {
  if (!rep.model?.local || (rep.status === 'reproduced' && !byModel(rep))) return [];
  const name = `\`${rep.model.name}\``;
  return rep.status === 'reproduced'
    ? [`_A small local model (${name}, run on swt-bot's own machine) wrote this test; swt-bot ran it to check that it fails for the issue's reason._`, '']
    : [`_The tests were written by a small local model (${name}, run on swt-bot's own machine); a larger model may do better._`, ''];
}

export interface Where {
  /** The default branch the issue is reproduced on. */
  branch: string;
  sha: string;
}

export function renderReproductionStarted(where: Where): string {
  return [
    marker('reproduction'),
    '### ⏳ swt-bot is reproducing this issue',
    '',
    `Writing a test that fails on \`${where.branch}\` at ${short(where.sha)} for the reason this issue describes, and running it to make sure. This comment will show the result.`,
  ].join('\n');
}

/** The result on the issue: the test and its failure, or what was tried and how to help. */
export function renderReproductionResult(rep: Reproduction, where: Where, extra: { draftPr?: number; draftPrError?: string } = {}): string {
  const out = [marker('reproduction')];
  if (rep.status === 'reproduced') {
    out.push('### 🧪 swt-bot reproduced this issue', '');
    out.push(`This test fails on \`${where.branch}\` at ${short(where.sha)} for the reason the issue describes (it was run twice in a sandbox).`, '');
    const files = testFilesOf(rep.testPatch);
    const shown = rep.testPatch.length > TEST_PATCH_SHOWN ? rep.testPatch.slice(0, TEST_PATCH_SHOWN) : rep.testPatch;
    out.push(`<details><summary>Reproducing test${files.length ? ` (${files.map((f) => `<code>${inline(f)}</code>`).join(', ')})` : ''}</summary>`, '', fence(shown, 'diff'), '', '</details>', '');
    if (shown !== rep.testPatch) {
      out.push(`_The test is clipped: ${shown.length.toLocaleString('en-US')} of its ${rep.testPatch.length.toLocaleString('en-US')} characters are shown (GitHub refuses comments over ${COMMENT_LIMIT.toLocaleString('en-US')}); ${WHOLE_TEXT_WHERE}._`, '');
    }
    if (rep.failureExcerpt) {
      out.push(`<details open><summary>How it fails at ${short(where.sha)}</summary>`, '', fence(rep.failureExcerpt, 'text'), '', '</details>', '');
    }
    if (rep.evidence?.fixCheck?.verdict === 'flips') out.push('It also passes with a fix the model wrote as a stand-in (not a fix anyone has proposed yet), so it is likely to tell a real fix apart.', '');
    if (rep.evidence?.fixCheck?.verdict === 'no-fix') out.push('No fix the model wrote as a stand-in made it pass, so nothing but its failure above vouches for it.', '');
    if (extra.draftPr) out.push(`The test is in draft pull request #${extra.draftPr}.`, '');
    if (extra.draftPrError) out.push(`Could not open a draft pull request with the test: ${extra.draftPrError}`, '');
    out.push('A pull request that links this issue (`Fixes #…`) is checked against this test on its base and head.', '');
    out.push(...localModelLine(rep));
  } else {
    out.push('### swt-bot could not reproduce this issue', '');
    out.push(`No test it wrote failed on \`${where.branch}\` at ${short(where.sha)} for the reason the issue gives. What was tried:`, '');
    const tried = (rep.attempts?.length ? rep.attempts : [rep]).map((a) => `${a.strategy}: ${a.reason}`).join('\n');
    out.push(fence(tried, 'text'), '');
    out.push('**How to help:** add a minimal code snippet that shows the problem, or the full traceback or output you see, then comment `/swt reproduce`.', '');
    out.push(...localModelLine(rep));
  }
  out.push(`<sub>${usageLine(rep)}</sub>`);
  return clipText(out.join('\n'), COMMENT_LIMIT);
}

function testFilesOf(testPatch: string): string[] {
  try {
    return parsePatch(testPatch).flatMap((p) => diffPath(p.newFileName) ?? []);
  } catch {
    return [];
  }
}

export function renderIssueTooLarge(length: number): string {
  return [
    marker('notice'),
    `swt-bot did not read this issue: its body has ${length.toLocaleString('en-US')} characters, more than the ${MAX_ISSUE_BODY.toLocaleString('en-US')} it reads (GitHub's own limit).`,
    'Move long logs into an attached file, keep the snippet or traceback that shows the problem, then comment `/swt reproduce`.',
  ].join('\n');
}

export function renderRefusal(login: string): string {
  return [
    marker('refusal'),
    `Sorry @${login}, only people with write access to this repository can run swt-bot commands. A maintainer can run \`/swt reproduce\` or \`/swt validate\` here for you. (swt-bot says this once per thread.)`,
  ].join('\n');
}

const COMMAND_HELP: Record<(typeof COMMANDS)[number], string> = {
  reproduce: 'on an issue: write a test that reproduces it on the default branch, and post it here',
  validate: 'on a pull request: run the linked issues\' reproducing tests on its base and head (also approves installing a fork\'s dependency changes at the head pushed before the comment; `/swt validate <sha>` names it)',
  stats: 'how often swt-bot was right here: its tests checked against merged fixes (live S), gated bot PRs later reverted or fixed again, cost per issue',
  help: 'this message',
};

/** Help; with what was wrong about the command that asked for it. */
export function renderHelp(note?: { unknown: string } | { misplaced: 'reproduce' | 'validate' }): string {
  let first = 'swt-bot understands:';
  if (note && 'unknown' in note) first = `swt-bot does not know \`/swt ${note.unknown.replace(/`/g, '')}\`. It understands:`;
  else if (note) first = `\`/swt ${note.misplaced}\` works on ${note.misplaced === 'reproduce' ? 'issues' : 'pull requests'} only. swt-bot understands:`;
  return [
    marker('notice'),
    first,
    '',
    ...COMMANDS.map((c) => `- \`/swt ${c}\`: ${COMMAND_HELP[c]}`),
    '',
    'Commands need write access to the repository. Settings live in `.github/swt.yml`.',
  ].join('\n');
}

export function renderConfigError(message: string): string {
  return [marker('notice'), 'swt-bot cannot run here: the configuration is invalid.', '', fence(message, 'text'), '', 'Fix `.github/swt.yml` on the default branch; the next event uses the new file.'].join('\n');
}

export function renderJobError(what: 'reproducing this issue' | 'checking this pull request', message: string): string {
  return [marker(what === 'reproducing this issue' ? 'reproduction' : 'validation'), `swt-bot hit an error while ${what}:`, '', fence(message, 'text')].join('\n');
}

/** A limit of the operator's that stops new work: the daily budget of the installation, or an author's rate. */
export type LimitHit =
  | { kind: 'daily-budget'; dimension: 'tokens' | 'usd' | 'containerMs'; spent: number; limit: number }
  | { kind: 'author-rate'; login: string; perHour: number };

function limitSentence(hit: LimitHit): string {
  if (hit.kind === 'author-rate') {
    return `@${hit.login} has started ${hit.perHour} runs of swt-bot in the last hour, the most this installation allows (\`SWT_AUTHOR_RUNS_PER_HOUR\`). A maintainer can still run it with \`/swt reproduce\` or \`/swt validate\`, or try again in an hour.`;
  }
  const amount = (n: number) => (hit.dimension === 'usd' ? `$${n.toFixed(2)}` : hit.dimension === 'tokens' ? `${Math.round(n).toLocaleString('en-US')} LLM tokens` : `${Math.round(n / 60_000)} container minutes`);
  const env = { tokens: 'SWT_DAILY_TOKENS', usd: 'SWT_DAILY_USD', containerMs: 'SWT_DAILY_CONTAINER_MINUTES' }[hit.dimension];
  return `swt-bot has used this installation's budget for today (UTC): ${amount(hit.spent)} of ${amount(hit.limit)} (\`${env}\`). Nothing more is started until tomorrow; a maintainer can ask again then.`;
}

/** One comment per thread (edited in place) when a limit stops the work it asked for. */
export function renderLimitReached(hit: LimitHit, what: 'reproducing this issue' | 'checking this pull request'): string {
  return [marker('limit'), `swt-bot is not ${what}: ${limitSentence(hit)}`].join('\n');
}

export function renderLimitCheck(hit: LimitHit): CheckOutput {
  return { title: hit.kind === 'author-rate' ? 'Rate limit reached' : 'Daily budget reached', summary: `Nothing was run. ${limitSentence(hit)}` };
}

/** Said on a check whose pull request links more issues than one check covers. */
export function renderLinksLeftOut(left: readonly number[], max: number): string {
  const shown = left.slice(0, 20).map((n) => `#${n}`).join(', ');
  return `This pull request links ${left.length + max} issues; swt-bot checks the first ${max} (\`SWT_MAX_LINKED_ISSUES\`) and leaves out ${shown}${left.length > 20 ? ` and ${left.length - 20} more` : ''}.`;
}

// ─── Pull requests ────────────────────────────────────────────────────────────────────────────

export interface CheckOutput {
  title: string;
  summary: string;
  text?: string;
}

export function renderCheckProgress(step: string, issues: number[]): CheckOutput {
  return {
    title: 'Running the reproducing tests',
    summary: `Checking against ${issues.map((n) => `#${n}`).join(', ')} on the base and the head of this pull request.\n\n⏳ ${step}`,
  };
}

export function renderNoLinkedIssue(): CheckOutput {
  return {
    title: 'No linked issue',
    summary: 'This pull request links no issue, so there is no reproducing test to check it against. Add `Fixes #<issue>` to its description to have it checked.',
  };
}

export function renderAwaitingApproval(waiting: { manifests: string[]; machinery: string[] }, headSha: string): CheckOutput {
  const list = (paths: string[]) => ['', ...paths.map((m) => `- \`${m}\``), ''];
  const manifests = waiting.manifests.length ? [`differs from the base in dependency manifests:`, ...list(waiting.manifests)] : [];
  // A head's own conftest.py or set-up file decides how its tests run and what they report: it could make a failing test pass.
  const machinery = waiting.machinery.length
    ? [`${manifests.length ? 'It also changes' : 'changes'} test machinery (how tests run and how their results are reported), so it could make its own tests report a pass:`, ...list(waiting.machinery)]
    : [];
  return {
    title: 'Waiting for a maintainer',
    summary: [
      `This pull request comes from a fork, and its head ${short(headSha)} ${[...manifests, ...machinery].join('\n')}`.trimEnd(),
      '',
      `${manifests.length ? 'Installing them runs code from the fork, so n' : 'N'}othing is installed or run until a maintainer approves this head: \`/swt validate ${headSha}\` on this pull request. An approval holds for the head it names (or, without a sha, the head pushed before the comment); a later push needs a new one.${machinery.length ? " Once approved, the reproducing tests run on the head with the base's test machinery where they can, and the result says which was used." : ''}`,
    ].join('\n'),
  };
}

/** `/swt validate` that does not reach the current head: it was pushed after the comment, or the comment names another. */
export function renderApprovalNotBound(by: string, headSha: string, reason: 'other-head' | 'pushed-after', named?: string): string {
  const why =
    reason === 'other-head'
      ? `names ${inline(named ?? '')}, but the head of this pull request is now ${short(headSha)}`
      : `came before the head ${short(headSha)} was pushed (or before swt-bot saw it), so it does not approve that head`;
  return [marker('notice'), `@${by}: \`/swt validate\` ${why}. To approve it, comment \`/swt validate ${headSha}\`.`].join('\n');
}

export function renderSuperseded(newHead: string): CheckOutput {
  return { title: 'Superseded', summary: `A newer push to this pull request${newHead ? ` (${short(newHead)})` : ''} is checked instead.` };
}

export function renderBadConfigCheck(message: string): CheckOutput {
  return { title: 'Invalid .github/swt.yml', summary: `swt-bot cannot run: the configuration is invalid.\n\n${fence(message, 'text')}` };
}

const CONCLUSION_TITLE: Record<CheckConclusion, string> = {
  success: 'The fix passes the reproducing tests',
  neutral: 'The fix does not pass the reproducing tests',
  failure: 'The fix does not pass the reproducing tests',
};

function issueSection(o: IssueOutcome): string {
  if (o.kind === 'no-reproduction') return `#### #${o.issue}: no reproducing test\n\n${fence(o.reason, 'text')}\n`;
  if (o.kind === 'error') return `#### #${o.issue}: error\n\n${fence(o.message, 'text')}\n`;
  const v = o.validation;
  const head = v.head ? short(v.head) : 'head';
  const lines = [
    `#### #${o.issue}: base ${short(v.base)} → head ${head}`,
    '',
    `Test by strategy \`${o.reproduction.strategy}\`, written at ${short(o.reproduction.sha)}. ${(v.durationMs / 1000).toFixed(1)} s.`,
    '',
    renderVerdictMarkdown(v, { maxRows: 30 }),
  ];
  if (v.machinery) lines.push(machineryMarkdown(v.machinery), '');
  if (v.coverage) lines.push(`📏 ${describeCoverage(v.coverage)} (of the code this pull request changes).`, '');
  if (v.coverageError) lines.push('📏 Change coverage was not measured:', '', fence(v.coverageError, 'text'), '');
  if (v.testEnvironment) lines.push(`🧪 Tests ran with ${Object.entries(v.testEnvironment.env).map(([k, val]) => `\`${inline(`${k}=${val}`).replace(/`/g, '')}\``).join(' ')}, taken from ${v.testEnvironment.source.replace(/`/g, '')}.`, '');
  if (v.warnings.length) lines.push('⚠️ Warnings:', '', fence(v.warnings.join('\n'), 'text'), '');
  return lines.join('\n');
}

/** Whose test machinery the head's runs used, when the head changed some: said plainly, as the reason a result is not trusted. */
export function machineryMarkdown(m: { changed: string[]; used: 'base' | 'head' }): string {
  const files = m.changed.slice(0, 10).map((f) => `\`${inline(f).replace(/`/g, '')}\``).join(', ') + (m.changed.length > 10 ? ` and ${m.changed.length - 10} more` : '');
  if (m.used === 'base') return `🔧 This head changes test machinery (${files}): the tests ran on it with the base's test machinery, the head's set aside.`;
  return `⚠️ **Not trusted: the tests ran with the head's own test set-up.** This head changes test machinery (${files}), and the tests could not run on it with the base's. A head's own set-up can make a failing test report a pass, so this result never counts as likely correct.`;
}

/** Why the check concluded as it did, in one sentence. */
function gateSentence(conclusion: CheckConclusion, gated: boolean, author: string, issues: readonly IssueOutcome[] = []): string {
  if (conclusion === 'success') return 'Every reproducing test fails on the base and passes on the head, and none fails on the head.';
  const own = issues.filter((o) => o.kind === 'validated' && o.validation.machinery?.used === 'head').map((o) => `#${o.issue}`);
  const untrusted = own.length ? ` (for ${own.join(', ')} the tests ran with the head's own test set-up, which it does not trust)` : '';
  const why = `The fix filter (at least one test from failing to passing, and no test failing on the head) does not pass${untrusted}`;
  return gated ? `${why}; pull requests by ${author} must pass it (\`gate\` in \`.github/swt.yml\`).` : `${why}. For pull requests by ${author} this is informational.`;
}

export function renderCheckResult(r: { conclusion: CheckConclusion; gated: boolean; author: string; issues: IssueOutcome[] }): CheckOutput {
  const summary = [gateSentence(r.conclusion, r.gated, r.author, r.issues), '', ...r.issues.map(issueSection)].join('\n');
  return { title: CONCLUSION_TITLE[r.conclusion], summary: clip(summary) };
}

/** The same table as the check, as one PR comment found again by its marker. */
export function renderPrComment(r: { conclusion: CheckConclusion; gated: boolean; author: string; issues: IssueOutcome[] }): string {
  const icon = r.conclusion === 'success' ? '✅' : r.conclusion === 'failure' ? '❌' : '➖';
  return clip([marker('validation'), `### ${icon} swt-bot: ${CONCLUSION_TITLE[r.conclusion].toLowerCase()}`, '', gateSentence(r.conclusion, r.gated, r.author, r.issues), '', ...r.issues.map(issueSection)].join('\n'));
}

function clip(text: string): string {
  return text.length <= OUTPUT_LIMIT ? text : `${text.slice(0, OUTPUT_LIMIT)}\n\n_…cut to GitHub's size limit._`;
}


// ─── Ranking ──────────────────────────────────────────────────────────────────────────────────

/** `/swt stats`: the repository's live accuracy, one row per strategy (and their total). */
export function renderStats(repo: string, rows: ReadonlyArray<{ row: LiveAccuracyRow; total: boolean }>): string {
  const head = [marker('stats'), `### swt-bot on ${repo}: live accuracy`, ''];
  if (rows.length === 0) return [...head, 'Nothing measured yet: live accuracy counts once a pull request that closes a reproduced issue is merged.'].join('\n');
  const line = ({ row: r, total }: { row: LiveAccuracyRow; total: boolean }) => {
    const b = (x: string) => (total ? `**${x}**` : x);
    return `| ${b(r.strategy)} | ${r.confirmed} / ${r.checked} | ${b(percent(r.liveS))} | ${r.followedUp} / ${r.gatedMerged} | ${percent(r.followUpRate)} | ${r.issues} | ${usd(r.costPerIssue)} |`;
  };
  return [
    ...head,
    '| Strategy | Confirmed / merged fixes checked | Live S | Reverted or fixed again / gated bot PRs merged | Rate | Issues | Cost per issue |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(line),
    '',
    "<sub>When a pull request that closes a reproduced issue is merged, swt-bot runs its test at the PR's base and at the merge commit: F→P confirms the reproduction.</sub>",
  ].join('\n');
}

/** The table of competing fixes on the issue, best first (the caller ranks). */
export function renderRanking(issue: number, ranked: readonly Candidate[]): string {
  const rows = ranked.map(
    (c, i) =>
      `| ${i + 1} | #${c.pr} | ${c.author} | ${c.verdict === 'likely-correct' ? '**likely correct**' : c.verdict === 'own-set-up' ? `⚠️ ${CANDIDATE_VERDICT_TEXT[c.verdict]}` : CANDIDATE_VERDICT_TEXT[c.verdict]} | ${c.f2p} | ${c.failing} | ${(c.durationMs / 1000).toFixed(1)} s | ${c.diffSize} | ${short(c.headSha)} |`,
  );
  return [
    marker('ranking'),
    `### swt-bot: ${ranked.length} pull requests claim to fix #${issue}`,
    '',
    '| Rank | PR | Author | Verdict | F→P | Failing after | Run time | Diff lines | Head |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    '<sub>Ranked by verdict, then by smaller diff, then by shorter run. Updated whenever one of them changes.</sub>',
  ].join('\n');
}
