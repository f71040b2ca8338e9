import { followUpsOf, liveAccuracy, percent, totalRow, usd, type Confirmation, type MergeRecord } from '../../src/pipeline/liveAccuracy.js';

const R = { owner: 'octo', repo: 'calc' };
const conf = (issue: number, strategy: string, confirmed: boolean): Confirmation => ({
  ...R,
  issue,
  pr: 100 + issue,
  mergeSha: `m${issue}`,
  baseSha: 'b',
  strategy,
  reproductionId: issue,
  confirmed,
  transitions: [confirmed ? 'F2P' : 'F2F'],
  at: issue,
});
const merge = (pr: number, over: Partial<MergeRecord> = {}): MergeRecord => ({
  ...R,
  pr,
  mergeSha: `${pr}abcdef0000`,
  author: 'fixer[bot]',
  gated: true,
  issues: [pr - 100],
  strategy: 'agent',
  mergedAt: pr,
  followUp: null,
  ...over,
});

describe('liveAccuracy', () => {
  it('live S, follow-up rate and cost per issue, per repository and strategy', () => {
    const rows = liveAccuracy({
      confirmations: [conf(1, 'agent', true), conf(2, 'agent', true), conf(3, 'agent', false), conf(4, 'snippet', false)],
      merges: [merge(101), merge(102, { followUp: { kind: 'reverted', pr: 110 } }), merge(103, { gated: false, author: 'alice' }), merge(104, { strategy: null })],
      costs: [
        { ...R, issue: 1, strategy: 'agent', status: 'reproduced', costUsd: 0.1, tokens: 1 },
        { ...R, issue: 1, strategy: 'agent', status: 'reproduced', costUsd: 0.1, tokens: 1 },
        { ...R, issue: 2, strategy: 'agent', status: 'reproduced', costUsd: 0.2, tokens: 1 },
        { owner: 'other', repo: 'x', issue: 9, strategy: 'agent', status: 'not-reproduced', costUsd: 1, tokens: 1 },
      ],
    });
    expect(rows.map((r) => [r.owner, r.strategy, r.checked, r.confirmed, r.liveS, r.gatedMerged, r.followedUp, r.followUpRate, r.issues, r.costPerIssue])).toEqual([
      ['octo', 'agent', 3, 2, 2 / 3, 2, 1, 0.5, 2, expect.closeTo(0.2, 10)],
      ['octo', 'snippet', 1, 0, 0, 0, 0, null, 0, null],
      ['other', 'agent', 0, 0, null, 0, 0, null, 1, 1],
    ]);
    const total = totalRow(rows.filter((r) => r.owner === 'octo'), R);
    expect(total).toMatchObject({ strategy: 'all', checked: 4, confirmed: 2, liveS: 0.5, gatedMerged: 2, followUpRate: 0.5 });
    expect([percent(2 / 3), percent(null), usd(0.2), usd(12.5), usd(null)]).toEqual(['67 %', '–', '$0.200', '$12.50', '–']);
  });

  it('a revert names the PR or its merge commit; a later fix of the same issue is a fix again', () => {
    const earlier = [merge(101), merge(102), merge(103, { issues: [7] })];
    expect(followUpsOf({ pr: 120, title: 'Revert "Fix parsing (#101)"', body: 'Reverts octo/calc#101', issues: [] }, earlier)).toEqual([{ pr: 101, kind: 'reverted' }]);
    expect(followUpsOf({ pr: 121, title: 'Revert the parser change', body: 'This reverts commit 102abcdef0000.', issues: [] }, earlier)).toEqual([{ pr: 102, kind: 'reverted' }]);
    expect(followUpsOf({ pr: 122, title: 'Fix parsing properly', body: 'Closes #7', issues: [7, 2] }, earlier)).toEqual([
      { pr: 102, kind: 'fixed-again' },
      { pr: 103, kind: 'fixed-again' },
    ]);
    // Naming a PR without reverting it is nothing; #1010 is not #101.
    expect(followUpsOf({ pr: 123, title: 'Docs', body: 'see #101 and #1010', issues: [] }, earlier)).toEqual([]);
    expect(followUpsOf({ pr: 124, title: 'Revert "x"', body: 'Reverts octo/calc#1010', issues: [] }, earlier)).toEqual([]);
  });
});
