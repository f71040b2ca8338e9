/** The techniques' pure parts: the vote on the failure reason, the stand-in fix's verdict and what it does to posting, the spec parser, the ensemble's score. */
import { applyFixVerdict, filesInFailure, judgeOnFix } from '../../src/generation/fixCheck.js';
import { evidenceScore } from '../../src/generation/strategies/ensemble.js';
import { parseTechniques } from '../../src/generation/techniques.js';
import type { FailureEvidence, Reproduction } from '../../src/generation/types.js';
import { normaliseMessage, voteOnFailures, type Ballot } from '../../src/generation/vote.js';
import type { RunResult } from '../../src/results/types.js';

const ballot = (index: number, failure: Partial<FailureEvidence> | null, size = 5): Ballot => {
  const f: FailureEvidence | undefined = failure ? { id: `t.py::test_${index}`, kind: 'assertion', ...failure } : undefined;
  return {
    index,
    failsOnBase: Boolean(f && f.kind !== 'own-error' && f.kind !== 'collection'),
    size,
    evidence: { runs: [{ exitCode: f ? 1 : 0, timedOut: false, durationMs: 1, failures: f ? [f] : [], passed: f ? 0 : 1 }], reproducingTests: f ? [f.id] : [] },
  };
};

describe('the vote on the failure reason', () => {
  it('keeps the test whose reason most samples share, the shortest of them first', () => {
    const v = voteOnFailures([
      ballot(0, { kind: 'assertion', exception: 'AssertionError', message: 'assert 3 == 4' }),
      ballot(1, { kind: 'issue-exception', exception: 'ValueError', message: "invalid literal for int() with base 10: '1h30'" }, 9),
      ballot(2, { kind: 'issue-exception', exception: 'ValueError', message: "invalid literal for int() with base 10: '1h30'" }, 4),
    ]);
    expect(v.order).toEqual([2, 1, 0]);
    expect(v.groups).toEqual([
      { reason: 'issue-exception:ValueError', samples: [1, 2] },
      { reason: 'assertion:AssertionError', samples: [0] },
    ]);
    expect(v).toMatchObject({ agree: 2, voters: 3 });
  });

  it('a test that passes on base, or fails by its own error, has no vote and never wins, however many there are', () => {
    const v = voteOnFailures([ballot(0, null), ballot(1, null), ballot(2, { kind: 'own-error', exception: 'ImportError' }), ballot(3, { kind: 'assertion', message: 'x' })]);
    expect(v.order).toEqual([3]);
    expect(v).toMatchObject({ agree: 1, voters: 1 });
    expect(voteOnFailures([ballot(0, null), ballot(1, null)]).order).toEqual([]);
  });

  it('a tie goes to the stronger kind (the issue’s own exception), then to the earlier sample', () => {
    expect(voteOnFailures([ballot(0, { kind: 'assertion', message: 'a' }), ballot(1, { kind: 'issue-exception', exception: 'KeyError' })]).order).toEqual([1, 0]);
    expect(voteOnFailures([ballot(0, { kind: 'assertion', exception: 'AssertionError' }), ballot(1, { kind: 'other-exception', exception: 'TypeError' })]).order).toEqual([0, 1]);
  });

  it('messages that differ only in paths, line numbers and addresses are the same reason', () => {
    expect(normaliseMessage('KeyError at /testbed/pkg/mod.py:12 <obj at 0x7f3a>')).toBe(normaliseMessage('KeyError at /tmp/x/pkg/mod.py:40 <obj at 0x11aa>'));
    expect(normaliseMessage('assert 3 == 4')).not.toBe(normaliseMessage('assert 3 == 5'));
  });
});

const run = (tests: RunResult['tests'], extra: Partial<RunResult> = {}): RunResult => ({ tests, fileErrors: [], timedOut: false, exitCode: 0, output: 'out', durationMs: 1, ...extra });
const rep = (over: Partial<Reproduction> = {}): Reproduction => ({
  status: 'reproduced',
  strategy: 'zero-shot-plus',
  testPatch: '+++ b/tests/test_x.py\n+def test_x(): assert f() == 1\n',
  reason: 'fails on base with ValueError',
  usage: { promptTokens: 1, completionTokens: 1, costUsd: 0, steps: 1, wallMs: 1 },
  evidence: { applied: true, testFiles: ['tests/test_x.py'], runs: [], reproducingTests: ['tests/test_x.py::test_x'], notes: [] },
  ...over,
});

describe('the stand-in fix', () => {
  const id = 'tests/test_x.py::test_x';

  it('passing with the fix flips; still failing is a false reproduction; not running says nothing about the test', () => {
    expect(judgeOnFix([id], run([{ id, outcome: 'passed' }])).verdict).toBe('flips');
    const still = judgeOnFix([id], run([{ id, outcome: 'failed', failureKind: 'assertion', message: 'assert 5401 == 5400' }]));
    expect(still).toMatchObject({ verdict: 'fails-on-fix', failureExcerpt: 'assert 5401 == 5400' });
    expect(still.reason).toMatch(/also fails with a fix the model wrote \(tests\/test_x.py::test_x: assert 5401 == 5400\)/);
    expect(judgeOnFix([id], run([], { fileErrors: [{ file: 'tests/test_x.py', kind: 'collection', message: 'SyntaxError in parse.py' }] }))).toMatchObject({ verdict: 'no-fix' });
    expect(judgeOnFix([id], run([{ id, outcome: 'failed', failureKind: 'collection' }])).verdict).toBe('no-fix');
    expect(judgeOnFix([id, 'tests/test_x.py::test_y'], run([{ id, outcome: 'passed' }])).verdict).toBe('fails-on-fix');
  });

  it('a test that fails on the fix too is never posted, in either mode; the test and the reason are kept', () => {
    const check = { verdict: 'fails-on-fix' as const, reason: 'the test also fails with a fix the model wrote', fixFiles: ['pkg/mod.py'] };
    for (const mode of ['demote', 'require'] as const) {
      const r = applyFixVerdict(rep(), check, mode);
      expect(r.status).toBe('not-reproduced');
      expect(r.reason).toMatch(/^not posted: the test also fails with a fix the model wrote; on base: fails on base with ValueError$/);
      expect(r.testPatch).toBe(rep().testPatch);
      expect(r.evidence?.fixCheck).toEqual(check);
      expect(r.evidence?.reproducingTests).toEqual([]);
    }
  });

  it('no usable fix: demote leaves the reproduction standing (unconfirmed), require does not post it; a flip stands in both', () => {
    const none = { verdict: 'no-fix' as const, reason: 'the stand-in fix changes no source file', fixFiles: [] };
    expect(applyFixVerdict(rep(), none, 'demote').status).toBe('reproduced');
    expect(applyFixVerdict(rep(), none, 'demote').evidence?.notes).toContain('stand-in fix: no-fix: the stand-in fix changes no source file');
    expect(applyFixVerdict(rep(), none, 'require')).toMatchObject({ status: 'not-reproduced', reason: expect.stringMatching(/^not posted: unconfirmed \(the stand-in fix changes no source file\)/) });
    const flips = { verdict: 'flips' as const, reason: 'passes', fixFiles: ['a.py'] };
    for (const mode of ['demote', 'require'] as const) expect(applyFixVerdict(rep(), flips, mode).status).toBe('reproduced');
  });

  it('reads the source files a traceback names', () => {
    const tb = 'Traceback (most recent call last):\n  File "/testbed/durations/parse.py", line 14, in parse_duration\n  File "tests/test_parse.py", line 3\nsrc/index.js:12:5';
    expect(filesInFailure(tb, () => true)).toEqual(['durations/parse.py', 'src/index.js']);
  });
});

describe('the ensemble chooses with these signals', () => {
  it('a test that flips on the stand-in fix outranks one that was not checked, and a larger vote a smaller one', () => {
    const flipped = rep({ evidence: { ...rep().evidence!, fixCheck: { verdict: 'flips', reason: '', fixFiles: [] } } });
    expect(evidenceScore(flipped)).toBeGreaterThan(evidenceScore(rep()));
    const voted = (agree: number) => rep({ evidence: { ...rep().evidence!, vote: { agree, samples: 3 } } });
    expect(evidenceScore(voted(3))).toBeGreaterThan(evidenceScore(voted(1)));
    expect(evidenceScore(rep({ status: 'not-reproduced' }))).toBeLessThan(evidenceScore(rep()));
  });
});

describe('parseTechniques', () => {
  it('reads the spec the CLI and bench:generate take', () => {
    expect(parseTechniques('feedback=2, vote=3@0.8:fix=demote,libro=vote,order=snippet+zero-shot-plus')).toEqual({
      feedback: { rounds: 2 },
      vote: { samples: 3, temperature: 0.8 },
      fixCheck: { mode: 'demote' },
      libro: { select: 'vote' },
      ensemble: { order: ['snippet', 'zero-shot-plus'] },
    });
    expect(parseTechniques('')).toEqual({});
    expect(parseTechniques(undefined)).toEqual({});
  });

  it('says what is wrong with a bad item', () => {
    expect(() => parseTechniques('vote=many')).toThrow(/"vote=many" needs a whole number from 0 to 20/);
    expect(() => parseTechniques('vote=3@0')).toThrow(/temperature above 0/);
    expect(() => parseTechniques('fix=maybe')).toThrow(/one of fix=off, fix=demote, fix=require/);
    expect(() => parseTechniques('order=snippet+magic')).toThrow(/joined by \+/);
    expect(() => parseTechniques('telepathy=1')).toThrow(/"telepathy=1" is not a technique/);
  });
});
