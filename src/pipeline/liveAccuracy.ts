/**
 * Live accuracy: how often the bot was right on real traffic, per repository and strategy. Pure.
 *
 * - live S: of the merged fixes whose issue had a stored reproduction, the share where that test,
 *   run at the PR's base and at the merge commit, went F→P (a merged fix is ground truth).
 * - follow-up rate: of the gated bot PRs that were merged, the share a later merged PR reverted
 *   (title "Revert …" naming the PR or its merge commit) or fixed again (links one of its issues).
 * - cost per issue: LLM cost of every reproduction attempt over the issues attempted.
 */
import type { Transition } from '../results/types.js';
import { repoSlug } from '../github/types.js';

export interface RepoKey {
  owner: string;
  repo: string;
}

/** A merged PR, as live accuracy needs it. */
export interface MergeRecord extends RepoKey {
  pr: number;
  mergeSha: string;
  author: string;
  /** The author matched gate.authors and the bot's check ran on it. */
  gated: boolean;
  issues: number[];
  /** Strategy of the reproduction that checked it, if any. */
  strategy: string | null;
  mergedAt: number;
  /** Set when a later merged PR reverted it or fixed one of its issues again. */
  followUp: { kind: 'reverted' | 'fixed-again'; pr: number } | null;
}

/** The stored reproduction of an issue run at the merge commit of the PR that closed it. */
export interface Confirmation extends RepoKey {
  issue: number;
  pr: number;
  mergeSha: string;
  baseSha: string;
  strategy: string;
  reproductionId: number;
  /** The reproducing test went F→P (a true reproduction). */
  confirmed: boolean;
  /** Transitions of the reproducing tests, e.g. ['F2P'] or ['F2F']. */
  transitions: Transition[];
  at: number;
}

/** One reproduction attempt, as live accuracy counts its cost. */
export interface ReproductionCost extends RepoKey {
  issue: number;
  strategy: string;
  status: string;
  costUsd: number;
  tokens: number;
}

export interface LiveAccuracyRow extends RepoKey {
  strategy: string;
  /** Merged fixes whose stored test ran at the merge commit. */
  checked: number;
  confirmed: number;
  liveS: number | null;
  /** Gated bot PRs merged, and how many of them a later PR reverted or fixed again. */
  gatedMerged: number;
  followedUp: number;
  followUpRate: number | null;
  issues: number;
  costUsd: number;
  costPerIssue: number | null;
}

const ratio = (a: number, b: number) => (b === 0 ? null : a / b);

export function liveAccuracy(input: { confirmations: Confirmation[]; merges: MergeRecord[]; costs: ReproductionCost[] }): LiveAccuracyRow[] {
  const rows = new Map<string, LiveAccuracyRow & { issueSet: Set<number> }>();
  const row = (k: RepoKey, strategy: string) => {
    const id = `${repoSlug(k)}\u0000${strategy}`;
    let r = rows.get(id);
    if (!r) {
      r = { owner: k.owner, repo: k.repo, strategy, checked: 0, confirmed: 0, liveS: null, gatedMerged: 0, followedUp: 0, followUpRate: null, issues: 0, costUsd: 0, costPerIssue: null, issueSet: new Set() };
      rows.set(id, r);
    }
    return r;
  };
  for (const c of input.confirmations) {
    const r = row(c, c.strategy);
    r.checked++;
    if (c.confirmed) r.confirmed++;
  }
  for (const m of input.merges) {
    if (!m.gated || !m.strategy) continue;
    const r = row(m, m.strategy);
    r.gatedMerged++;
    if (m.followUp) r.followedUp++;
  }
  for (const c of input.costs) {
    const r = row(c, c.strategy);
    r.costUsd += c.costUsd;
    r.issueSet.add(c.issue);
  }
  return [...rows.values()]
    .map(({ issueSet, ...r }) => ({
      ...r,
      issues: issueSet.size,
      liveS: ratio(r.confirmed, r.checked),
      followUpRate: ratio(r.followedUp, r.gatedMerged),
      costPerIssue: ratio(r.costUsd, issueSet.size),
    }))
    .sort((a, b) => repoSlug(a).localeCompare(repoSlug(b)) || a.strategy.localeCompare(b.strategy));
}

/** Totals over rows (one repository's, or all): the same measures, every strategy together. */
export function totalRow(rows: LiveAccuracyRow[], key: RepoKey & { strategy?: string }): LiveAccuracyRow {
  const sum = (f: (r: LiveAccuracyRow) => number) => rows.reduce((n, r) => n + f(r), 0);
  const checked = sum((r) => r.checked);
  const confirmed = sum((r) => r.confirmed);
  const gatedMerged = sum((r) => r.gatedMerged);
  const followedUp = sum((r) => r.followedUp);
  const issues = sum((r) => r.issues);
  const costUsd = sum((r) => r.costUsd);
  return {
    owner: key.owner,
    repo: key.repo,
    strategy: key.strategy ?? 'all',
    checked,
    confirmed,
    liveS: ratio(confirmed, checked),
    gatedMerged,
    followedUp,
    followUpRate: ratio(followedUp, gatedMerged),
    issues,
    costUsd,
    costPerIssue: ratio(costUsd, issues),
  };
}

/** Rows per strategy, each repository followed by its total when it has more than one. */
export function accuracyRowsWithTotals(rows: LiveAccuracyRow[]): Array<{ row: LiveAccuracyRow; total: boolean }> {
  const out: Array<{ row: LiveAccuracyRow; total: boolean }> = [];
  const repos = [...new Set(rows.map(repoSlug))];
  for (const name of repos) {
    const mine = rows.filter((r) => repoSlug(r) === name);
    for (const r of mine) out.push({ row: r, total: false });
    if (mine.length > 1) out.push({ row: totalRow(mine, { owner: mine[0]!.owner, repo: mine[0]!.repo }), total: true });
  }
  return out;
}

/** A merged PR's title and body, and the closing links found for it. */
export interface MergedPull {
  pr: number;
  title: string;
  body: string;
  issues: number[];
}

/**
 * Which earlier merged PRs this merge follows up: a revert ("Revert …" whose title or body names
 * `#<pr>` or the merge commit, as GitHub's revert button writes it), or a new fix for one of their
 * issues. Each earlier PR at most once; reverts take precedence.
 */
export function followUpsOf(merged: MergedPull, earlier: MergeRecord[]): Array<{ pr: number; kind: 'reverted' | 'fixed-again' }> {
  const text = `${merged.title}\n${merged.body}`;
  const isRevert = /^\s*revert\b/i.test(merged.title);
  const out: Array<{ pr: number; kind: 'reverted' | 'fixed-again' }> = [];
  for (const m of earlier) {
    if (m.pr === merged.pr) continue;
    const names = new RegExp(`(^|[^\\w/])(${escape(m.owner)}/${escape(m.repo)})?#${m.pr}(?!\\d)`).test(text) || (m.mergeSha.length >= 7 && text.includes(m.mergeSha.slice(0, 7)));
    if (isRevert && names) out.push({ pr: m.pr, kind: 'reverted' });
    else if (m.issues.some((i) => merged.issues.includes(i))) out.push({ pr: m.pr, kind: 'fixed-again' });
  }
  return out;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Share as a percentage, or a dash when nothing was counted. */
export function percent(x: number | null): string {
  return x === null ? '–' : `${Math.round(x * 100)} %`;
}

export function usd(x: number | null): string {
  return x === null ? '–' : `$${x.toFixed(x < 1 ? 3 : 2)}`;
}
