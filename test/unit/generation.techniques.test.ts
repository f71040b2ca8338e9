/** The techniques' pure parts: the vote on the failure reason, the stand-in fix's verdict and what it does to posting, the spec parser, the ensemble's score. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyFixVerdict, calledSite, filesInFailure, fixCheckMode, judgeOnFix, siteAnswerPatch } from '../../src/generation/fixCheck.js';
import { failureSite } from '../../src/generation/verify.js';
import { standInFixPrompt } from '../../src/generation/prompts.js';
import { loadLanguage } from '../../src/patch/structure.js';
import { readRepoFile } from '../../src/generation/repoFiles.js';
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
    // Failing as on base: the fix did not reach the failure (the 1.5B rewrote parse_duration unchanged in substance).
    const base = new Map([[id, "ValueError: invalid literal for int() with base 10: '1h30'"]]);
    const same = judgeOnFix([id], run([{ id, outcome: 'failed', failureKind: 'error', message: "ValueError: invalid literal for int() with base 10: '1h30'" }]), base);
    expect(same).toMatchObject({ verdict: 'no-fix', reason: expect.stringMatching(/^the stand-in fix left the failure as it was \(tests\/test_x.py::test_x: ValueError/) });
    expect(judgeOnFix([id], run([{ id, outcome: 'failed', failureKind: 'assertion', message: 'assert 5401 == 5400' }]), base).verdict).toBe('fails-on-fix');
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

  it("confirm: with no usable fix, a test failing with the issue's own error stands and a plain assertion is not posted; failing on the fix is never posted", () => {
    const none = { verdict: 'no-fix' as const, reason: 'the stand-in fix left the failure as it was', fixFiles: ['durations/parse.py'] };
    const failing = (kind: 'issue-exception' | 'issue-symptom' | 'assertion') => rep({ evidence: { ...rep().evidence!, runs: [{ exitCode: 1, timedOut: false, durationMs: 1, passed: 0, failures: [{ id, kind, exception: 'ValueError', message: 'ValueError: x' }] }] } });
    expect(applyFixVerdict(failing('issue-exception'), none, 'confirm').status).toBe('reproduced');
    expect(applyFixVerdict(failing('issue-symptom'), none, 'confirm').status).toBe('reproduced');
    expect(applyFixVerdict(failing('assertion'), none, 'confirm')).toMatchObject({
      status: 'not-reproduced',
      reason: 'not posted: unconfirmed (the stand-in fix left the failure as it was), and its failure is not the error the issue reports; on base: fails on base with ValueError',
    });
    // Another test's failure is not this one's.
    const other = rep({ evidence: { ...rep().evidence!, runs: [{ exitCode: 1, timedOut: false, durationMs: 1, passed: 0, failures: [{ id: 'tests/test_x.py::test_other', kind: 'issue-exception' }] }] } });
    expect(applyFixVerdict(other, none, 'confirm').status).toBe('not-reproduced');
    const fails = { verdict: 'fails-on-fix' as const, reason: 'the test also fails with a fix the model wrote', fixFiles: ['a.py'] };
    expect(applyFixVerdict(failing('issue-exception'), fails, 'confirm').status).toBe('not-reproduced');
    expect(applyFixVerdict(failing('assertion'), { verdict: 'flips', reason: 'passes', fixFiles: ['a.py'] }, 'confirm').status).toBe('reproduced');
  });

  it("a local model's own tests are confirmed (fix=confirm) unless a mode is given; the snippet strategy's, and a remote model's, are not checked by default", () => {
    const ctx = (local: boolean, mode?: 'off' | 'demote' | 'require') => ({ llm: { model: 'm', local, chat: async () => ({}) } as never, options: mode ? { fixCheck: { mode } } : {} });
    expect(fixCheckMode(ctx(true), 'zero-shot-plus')).toBe('confirm');
    expect(fixCheckMode(ctx(true), 'agent')).toBe('confirm');
    expect(fixCheckMode(ctx(true), 'snippet')).toBe('off');
    expect(fixCheckMode(ctx(false), 'zero-shot-plus')).toBe('off');
    expect(fixCheckMode(ctx(true, 'off'), 'zero-shot-plus')).toBe('off');
    expect(fixCheckMode(ctx(false, 'demote'), 'libro')).toBe('demote');
    expect(fixCheckMode({ llm: null, options: { fixCheck: { mode: 'require' } } }, 'zero-shot-plus')).toBe('off');
  });

  it("finds the failure's site in the repository's source: Python's deepest frame (the last), another trace's first", () => {
    const src = (p: string) => !p.startsWith('lib/');
    const pytest = 'tests/test_p.py:5: in test_combined\n    assert parse_duration("1h30m") == 5400\ndurations/parse.py:14: in parse_duration\n    return int(text[:-1])\nE   ValueError: invalid literal';
    expect(failureSite(pytest, src)).toEqual({ path: 'durations/parse.py', line: 14 });
    const tb = 'Traceback (most recent call last):\n  File "/testbed/tests/test_p.py", line 5, in test_x\n  File "/testbed/durations/api.py", line 3, in parse\n  File "/testbed/durations/parse.py", line 14, in parse_duration\n  File "/usr/lib/python3.11/re.py", line 9, in sub';
    expect(failureSite(tb, src)).toEqual({ path: 'durations/parse.py', line: 14 });
    const node = "TypeError: x is not a function\n    at parse (/testbed/src/parse.js:12:5)\n    at Object.<anonymous> (/testbed/src/index.js:3:1)\n    at Context.<anonymous> (test/parse.test.js:8:3)\n    at node_modules/mocha/lib/runner.js:1:1";
    expect(failureSite(node, src)).toEqual({ path: 'src/parse.js', line: 12 });
    expect(failureSite('    at Context.<anonymous> (test/parse.test.js:8:3)', src)).toBeUndefined();
  });

  it("the stand-in fix of a site: the function shown, asked for whole in a plain block, and placed by name; an answer already in a diff format stands", () => {
    const site = { via: 'trace' as const, path: 'durations/parse.py', line: 14, name: 'parse_duration', kind: 'function' as const, code: 'def parse_duration(text):\n    return int(text[:-1]) * UNITS[text[-1]]' };
    const prompt = standInFixPrompt({ title: 't', body: 'b' }, '+test', 'ValueError', [], site);
    expect(prompt).toContain('The failure passes through `parse_duration` of durations/parse.py (line 14):\n```\ndef parse_duration(text):');
    expect(prompt).toContain('write `parse_duration` again, corrected, the whole function');
    expect(prompt).not.toContain('(the corrected function, whole)');
    // With no site: custom-diff blocks, the example naming a real source file and its first function's line (small models copy the example).
    const blocks = standInFixPrompt({ title: 't', body: 'b' }, '+test', 'ValueError', [{ path: 'durations/parse.py', content: 'UNITS = {}\n\n\ndef parse_duration(text):\n    pass\n' }]);
    expect(blocks).toContain('is written as:\n```custom-diff\ndiff\ndurations/parse.py\nrewrite\n4\n');
    const fixed = 'def parse_duration(text):\n    return sum(int(n) * UNITS[u] for n, u in PARTS.findall(text))';
    expect(siteAnswerPatch(`Here it is:\n\n\`\`\`python\n${fixed}\n\`\`\`\n`, site)).toBe(`diff\ndurations/parse.py\nrewrite\n14\n${fixed}\nend diff`);
    expect(siteAnswerPatch(fixed, site)).toBe(`diff\ndurations/parse.py\nrewrite\n14\n${fixed}\nend diff`);
    // A whole file that names its path stands as one; the function alone under its path is still placed by name.
    const whole = `durations/parse.py\n\`\`\`python\nUNITS = {"s": 1}\n\n\n${fixed}\n\n\ndef format_duration(seconds):\n    return "0s"\n\`\`\`\n`;
    expect(siteAnswerPatch(whole, site)).toBe(whole);
    expect(siteAnswerPatch(`durations/parse.py\n\`\`\`python\n${fixed}\n\`\`\`\n`, site)).toBe(`diff\ndurations/parse.py\nrewrite\n14\n${fixed}\nend diff`);
    const custom = '```custom-diff\ndiff\ndurations/parse.py\nrewrite\n10\ndef parse_duration(text):\n    return 0\nend diff\n```';
    expect(siteAnswerPatch(custom, site)).toBe('diff\ndurations/parse.py\nrewrite\n10\ndef parse_duration(text):\n    return 0\nend diff\n');
  });

  it("a plain assertion's stand-in fix shows the function the test calls: one the issue names first, then in the test's order, found in a source file the model sees", async () => {
    await Promise.all([loadLanguage('python'), loadLanguage('javascript')]);
    const time = 'import datetime as dt\n\n\ndef _now():\n    return dt.datetime.now()\n\n\ndef naturalday(value, format="%b %d"):\n    delta = value - _now().date()\n    return str(delta)\n\n\ndef naturaldate(value):\n    return naturalday(value, "%b %d %Y")\n';
    const testPatch = '--- a/tests/test_time.py\n+++ b/tests/test_time.py\n@@ -1,2 +1,6 @@\n import humanize\n+def helper(x):\n+    return x\n+\n+def test_tz():\n+    assert humanize.naturalday(helper(d)) == humanize.naturaldate(helper(d))\n';
    const sources = [{ path: 'tests/test_time.py', content: 'def naturaldate(v):\n    return v\n' }, { path: 'src/humanize/time.py', content: time }];
    // naturaldate is named by the issue: it goes before naturalday, which the test calls first; the test file's own definitions are not sites.
    const site = calledSite(testPatch, sources, 'naturaldate() gives the wrong answer for tz-aware datetimes');
    expect(site).toEqual({ via: 'call', path: 'src/humanize/time.py', line: 13, name: 'naturaldate', kind: 'function', code: 'def naturaldate(value):\n    return naturalday(value, "%b %d %Y")' });
    expect(calledSite(testPatch, sources, 'no name here')?.name).toBe('naturalday');
    const prompt = standInFixPrompt({ title: 't', body: 'b' }, testPatch, 'AssertionError', sources, site);
    expect(prompt).toContain('The test calls `naturaldate` of src/humanize/time.py (line 13):\n```\ndef naturaldate(value):');
    // A JS arrow function bound to a name is a site too; a name no source defines gives none.
    const js = [{ path: 'index.js', content: "const camelCase = (input, options) => {\n\treturn input.replace(/^[_.\\- ]+/, '');\n};\n\nmodule.exports = camelCase;\n" }];
    expect(calledSite("+++ b/test.js\n+test('keeps _', t => {\n+\tt.is(camelCase('_id'), '_id');\n+});\n", js, '`camelCase(\'_id\')` returns `id`')).toMatchObject({ name: 'camelCase', line: 1, kind: 'function' });
    expect(calledSite("+++ b/test.js\n+t.is(kebab('_id'), '_id');\n", js, 'x')).toBeUndefined();
  });

  it('a path a trace names is read only inside the checkout: not through `..`, an absolute path or a link out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swt-readrepo-'));
    try {
      mkdirSync(join(dir, 'repo', 'src'), { recursive: true });
      writeFileSync(join(dir, 'repo', 'src', 'a.py'), 'x = 1\n');
      writeFileSync(join(dir, 'secret.env'), 'TOKEN=decoy\n');
      symlinkSync(join(dir, 'secret.env'), join(dir, 'repo', 'src', 'link.py'));
      symlinkSync(dir, join(dir, 'repo', 'up'));
      const root = join(dir, 'repo');
      expect(await readRepoFile(root, 'src/a.py')).toBe('x = 1\n');
      expect(await readRepoFile(root, '/testbed/src/a.py')).toBe('x = 1\n');
      for (const p of ['../secret.env', 'src/../../secret.env', join(dir, 'secret.env'), 'src/link.py', 'up/secret.env']) expect(await readRepoFile(root, p)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    expect(() => parseTechniques('fix=maybe')).toThrow(/one of fix=off, fix=demote, fix=confirm, fix=require/);
    expect(parseTechniques('fix=confirm')).toEqual({ fixCheck: { mode: 'confirm' } });
    expect(() => parseTechniques('order=snippet+magic')).toThrow(/joined by \+/);
    expect(() => parseTechniques('telepathy=1')).toThrow(/"telepathy=1" is not a technique/);
  });
});
