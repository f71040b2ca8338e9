/** What the App posts, exactly: comments, check-run output, annotations, ranking, refusals, help. */
import { annotationsFor, batches } from '../../src/github/annotations.js';
import { marker, markerOf, renderAwaitingApproval, renderCheckResult, renderConfigError, renderHelp, renderIssueTooLarge, renderPrComment, renderRanking, renderRefusal, renderReproductionResult, renderReproductionStarted, RERUN_ACTION } from '../../src/github/render.js';
import type { Reproduction } from '../../src/generation/types.js';
import { verdictOf } from '../../src/harness/classify.js';

const testPatch = [
  'diff --git a/tests/test_swt.py b/tests/test_swt.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/tests/test_swt.py',
  '@@ -0,0 +1,5 @@',
  '+from durations import parse_duration',
  '+',
  '+',
  '+def test_combined():',
  '+    assert parse_duration("1h30m") == 5400',
  '',
].join('\n');

const reproduced: Reproduction = {
  status: 'reproduced',
  strategy: 'snippet',
  testPatch,
  failureExcerpt: 'ValueError: invalid literal',
  reason: 'fails with the issue exception',
  usage: { promptTokens: 0, completionTokens: 0, costUsd: 0, steps: 0, wallMs: 4321 },
};
const where = { branch: 'main', sha: '0123456789abcdef' };

describe('issue comments', () => {
  it('starts with a hidden marker that finds the comment again', () => {
    expect(renderReproductionStarted(where)).toBe(
      [
        '<!-- swt-bot:reproduction -->',
        '### ⏳ swt-bot is reproducing this issue',
        '',
        'Writing a test that fails on `main` at 0123456 for the reason this issue describes, and running it to make sure. This comment will show the result.',
      ].join('\n'),
    );
    expect(markerOf(renderReproductionStarted(where))).toBe('reproduction');
    expect(markerOf('<!-- swt-bot:ranking -->\nx')).toBe('ranking');
    expect(markerOf('quoting <!-- swt-bot:ranking -->')).toBeNull();
  });

  it('a reproduction: the test as a collapsible diff, its failure at the sha, strategy, time and cost', () => {
    expect(renderReproductionResult(reproduced, where)).toBe(
      [
        '<!-- swt-bot:reproduction -->',
        '### 🧪 swt-bot reproduced this issue',
        '',
        'This test fails on `main` at 0123456 for the reason the issue describes (it was run twice in a sandbox).',
        '',
        '<details><summary>Reproducing test (<code>tests/test_swt.py</code>)</summary>',
        '',
        '```diff',
        testPatch.trimEnd(),
        '```',
        '',
        '</details>',
        '',
        '<details open><summary>How it fails at 0123456</summary>',
        '',
        '```text',
        'ValueError: invalid literal',
        '```',
        '',
        '</details>',
        '',
        'A pull request that links this issue (`Fixes #…`) is checked against this test on its base and head.',
        '',
        '<sub>Strategy `snippet` · 4.3 s · LLM cost $0.0000 (0 tokens)</sub>',
      ].join('\n'),
    );
  });

  it('could not reproduce: what was tried (fenced: reasons may quote a model) and how to help', () => {
    const failed: Reproduction = {
      ...reproduced,
      status: 'not-reproduced',
      strategy: 'ensemble',
      testPatch: '',
      reason: 'no strategy reproduced the issue',
      attempts: [
        { ...reproduced, status: 'not-reproduced', strategy: 'snippet', reason: 'no code snippet or traceback in the issue' },
        { ...reproduced, status: 'not-reproduced', strategy: 'zero-shot-plus', reason: 'the test passed on base\n[click me](https://evil.example)' },
      ],
      usage: { promptTokens: 1200, completionTokens: 300, costUsd: 0.0123, steps: 2, wallMs: 61000 },
    };
    expect(renderReproductionResult(failed, where)).toBe(
      [
        '<!-- swt-bot:reproduction -->',
        '### swt-bot could not reproduce this issue',
        '',
        'No test it wrote failed on `main` at 0123456 for the reason the issue gives. What was tried:',
        '',
        '```text',
        'snippet: no code snippet or traceback in the issue',
        'zero-shot-plus: the test passed on base',
        '[click me](https://evil.example)',
        '```',
        '',
        '**How to help:** add a minimal code snippet that shows the problem, or the full traceback or output you see, then comment `/swt reproduce`.',
        '',
        '<sub>Strategy `ensemble` · 61.0 s · LLM cost $0.0123 (1500 tokens)</sub>',
      ].join('\n'),
    );
  });

  it('says when a small local model wrote the test, and only then (not for the snippet strategy, not for a remote model)', () => {
    const local = { name: 'local:qwen2.5-coder-1.5b', local: true };
    const byModel = renderReproductionResult({ ...reproduced, strategy: 'ensemble(zero-shot-plus)', model: local }, where);
    expect(byModel).toContain("_A small local model (`local:qwen2.5-coder-1.5b`, run on swt-bot's own machine) wrote this test; swt-bot ran it to check that it fails for the issue's reason._");
    expect(renderReproductionResult({ ...reproduced, strategy: 'ensemble(snippet)', model: local }, where)).not.toContain('local model');
    expect(renderReproductionResult({ ...reproduced, strategy: 'zero-shot-plus', model: { name: 'gpt-4o', local: false } }, where)).not.toContain('local model');
    const failed = renderReproductionResult({ ...reproduced, status: 'not-reproduced', strategy: 'zero-shot-plus', reason: 'no usable test', model: local }, where);
    expect(failed).toContain("_The tests were written by a small local model (`local:qwen2.5-coder-1.5b`, run on swt-bot's own machine); a larger model may do better._");
  });

  it('says when the test also passed with the model’s stand-in fix, and when no stand-in fix made it pass', () => {
    const evidence = { applied: true, testFiles: ['tests/test_parse.py'], runs: [], reproducingTests: [], notes: [] };
    const line = 'It also passes with a fix the model wrote as a stand-in (not a fix anyone has proposed yet), so it is likely to tell a real fix apart.';
    expect(renderReproductionResult({ ...reproduced, evidence: { ...evidence, fixCheck: { verdict: 'flips', reason: '', fixFiles: ['durations/parse.py'] } } }, where)).toContain(line);
    const unconfirmed = renderReproductionResult({ ...reproduced, evidence: { ...evidence, fixCheck: { verdict: 'no-fix', reason: '', fixFiles: [] } } }, where);
    expect(unconfirmed).not.toContain(line);
    expect(unconfirmed).toContain('No fix the model wrote as a stand-in made it pass, so nothing but its failure above vouches for it.');
    expect(renderReproductionResult(reproduced, where)).not.toContain('stand-in');
  });

  it('a test that contains backticks cannot break out of its fence', () => {
    const sneaky = { ...reproduced, testPatch: testPatch.replace('5400', '5400  # ```\\n@everyone') };
    const md = renderReproductionResult(sneaky, where);
    expect(md).toContain('````diff\n');
    expect(md).toContain('\n````\n');
  });

  it('refusal, help, too-large, bad config', () => {
    expect(renderRefusal('mallory')).toBe(
      '<!-- swt-bot:refusal -->\nSorry @mallory, only people with write access to this repository can run swt-bot commands. A maintainer can run `/swt reproduce` or `/swt validate` here for you. (swt-bot says this once per thread.)',
    );
    expect(renderHelp({ unknown: 'deploy' })).toBe(
      [
        '<!-- swt-bot:notice -->',
        'swt-bot does not know `/swt deploy`. It understands:',
        '',
        '- `/swt reproduce`: on an issue: write a test that reproduces it on the default branch, and post it here',
        "- `/swt validate`: on a pull request: run the linked issues' reproducing tests on its base and head (also approves installing a fork's dependency changes at the head pushed before the comment; `/swt validate <sha>` names it)",
        '- `/swt stats`: how often swt-bot was right here: its tests checked against merged fixes (live S), gated bot PRs later reverted or fixed again, cost per issue',
        '- `/swt help`: this message',
        '',
        'Commands need write access to the repository. Settings live in `.github/swt.yml`.',
      ].join('\n'),
    );
    expect(renderHelp({ misplaced: 'reproduce' }).split('\n')[1]).toBe('`/swt reproduce` works on issues only. swt-bot understands:');
    expect(renderIssueTooLarge(1048576)).toBe(
      '<!-- swt-bot:notice -->\nswt-bot did not read this issue: its body has 1,048,576 characters, more than the 65,536 it reads (GitHub\'s own limit).\nMove long logs into an attached file, keep the snippet or traceback that shows the problem, then comment `/swt reproduce`.',
    );
    expect(renderConfigError('.github/swt.yml: gate.mode: Invalid option')).toBe(
      '<!-- swt-bot:notice -->\nswt-bot cannot run here: the configuration is invalid.\n\n```text\n.github/swt.yml: gate.mode: Invalid option\n```\n\nFix `.github/swt.yml` on the default branch; the next event uses the new file.',
    );
    expect(renderAwaitingApproval({ manifests: ['package.json'], machinery: [] }, 'ec26c3e57ca3a959ca5aad62de7213c562f8c821').summary).toBe(
      'This pull request comes from a fork, and its head ec26c3e differs from the base in dependency manifests:\n\n- `package.json`\n\nInstalling them runs code from the fork, so nothing is installed or run until a maintainer approves this head: `/swt validate ec26c3e57ca3a959ca5aad62de7213c562f8c821` on this pull request. An approval holds for the head it names (or, without a sha, the head pushed before the comment); a later push needs a new one.',
    );
    expect(renderAwaitingApproval({ manifests: [], machinery: ['conftest.py'] }, 'ec26c3e57ca3a959ca5aad62de7213c562f8c821').summary).toBe(
      "This pull request comes from a fork, and its head ec26c3e changes test machinery (how tests run and how their results are reported), so it could make its own tests report a pass:\n\n- `conftest.py`\n\nNothing is installed or run until a maintainer approves this head: `/swt validate ec26c3e57ca3a959ca5aad62de7213c562f8c821` on this pull request. An approval holds for the head it names (or, without a sha, the head pushed before the comment); a later push needs a new one. Once approved, the reproducing tests run on the head with the base's test machinery where they can, and the result says which was used.",
    );
  });
});

describe('check run and PR comment', () => {
  const v = verdictOf([
    {
      id: 'tests/test_swt.py::test_combined',
      base: 'fail',
      head: 'fail',
      transition: 'F2F',
      flaky: false,
      baseFailure: { kind: 'assertion', message: 'ValueError' },
      headFailure: { kind: 'assertion', message: 'assert 5399 == 5400' },
    },
  ]);
  const outcome = {
    issue: 1,
    kind: 'validated' as const,
    validation: { ...v, base: 'aaaaaaaaaa', head: 'bbbbbbbbbb', durationMs: 2500, warnings: [] },
    reproduction: { strategy: 'snippet', sha: 'aaaaaaaaaa', testPatch },
  };
  const table = [
    '#### #1: base aaaaaaa → head bbbbbbb',
    '',
    'Test by strategy `snippet`, written at aaaaaaa. 2.5 s.',
    '',
    '| Test | Before fix | After fix | Result | Details |',
    '| --- | --- | --- | --- | --- |',
    '| `tests/test_swt.py::test_combined` | ❌ fail | ❌ fail | F→F | after: assertion `assert 5399 == 5400` |',
    '',
    'F→P 0 · P→F 0 · F→F 1 · P→P 0',
    '',
    '- ❌ **S (the tests reproduce the issue): no**: no test goes from failing to passing.',
    '- ❌ **Fix likely correct: no**: no test goes from failing to passing; 1 test still fails (F→F).',
    '',
  ].join('\n');

  it('the completed check: title, gate sentence, table and verdict', () => {
    expect(renderCheckResult({ conclusion: 'failure', gated: true, author: 'fixer[bot]', issues: [outcome] })).toEqual({
      title: 'The fix does not pass the reproducing tests',
      summary:
        'The fix filter (at least one test from failing to passing, and no test failing on the head) does not pass; pull requests by fixer[bot] must pass it (`gate` in `.github/swt.yml`).\n\n' +
        table,
    });
    expect(renderPrComment({ conclusion: 'neutral', gated: false, author: 'alice', issues: [outcome] })).toBe(
      '<!-- swt-bot:validation -->\n### ➖ swt-bot: the fix does not pass the reproducing tests\n\n' +
        'The fix filter (at least one test from failing to passing, and no test failing on the head) does not pass. For pull requests by alice this is informational.\n\n' +
        table,
    );
  });

  it('flaky tests are listed apart, with how many runs failed and why, and do not fail the verdict', () => {
    const flaky = verdictOf([
      { id: 'tests/test_swt.py::test_new', base: 'fail', head: 'pass', transition: 'F2P', flaky: false, runs: { base: { runs: 3, failed: 3 }, head: { runs: 3, failed: 0 } } },
      {
        id: 'tests/test_swt.py::test_after',
        base: 'pass',
        head: 'fail',
        transition: 'P2F',
        flaky: true,
        headFlaky: true,
        runs: { base: { runs: 3, failed: 0 }, head: { runs: 3, failed: 1 } },
        orderDependent: 'fails only after tests/test_swt.py::test_new',
        knownFlaky: true,
      },
    ]);
    const body = renderPrComment({ conclusion: 'success', gated: true, author: 'alice', issues: [{ ...outcome, validation: { ...flaky, base: 'aaaaaaaaaa', head: 'bbbbbbbbbb', durationMs: 2500, warnings: [] } }] });
    expect(body).toContain('| `tests/test_swt.py::test_after` | ✅ pass | ⚠️ flaky | P→F (flaky) |');
    expect(body).toContain(
      '**Flaky tests** (outcome changed between runs on the same code; not counted for S or the fix filter):\n\n' +
        '- ⚠️ `tests/test_swt.py::test_after`: failed 1 of 3 runs after the fix; fails only after tests/test_swt.py::test_new; seen flaky here before\n',
    );
    expect(body).toContain('- ✅ **S (the tests reproduce the issue): yes**');
    expect(body).toContain('- ✅ **Fix likely correct: yes**');
  });

  it('with `coverage: true`, ΔC of the tests over the PR change follows the table (or why it is missing)', () => {
    const measured = { ...outcome, validation: { ...outcome.validation, coverage: { dC: 0.75, referenceDC: null, covered: 3, lines: 4 } } };
    expect(renderPrComment({ conclusion: 'neutral', gated: false, author: 'alice', issues: [measured] })).toContain(
      `${table}\n📏 change coverage ΔC 75.0%: the tests run 3 of 4 executable changed lines more often (of the code this pull request changes).\n`,
    );
    const none = { ...outcome, validation: { ...outcome.validation, coverage: { dC: null, referenceDC: null, covered: 0, lines: 0 } } };
    expect(renderCheckResult({ conclusion: 'neutral', gated: false, author: 'alice', issues: [none] }).summary).toContain('📏 change coverage: no executable changed line (left out of ΔC)');
    const failed = { ...outcome, validation: { ...outcome.validation, coverageError: 'the V8 counter wrote nothing' } };
    expect(renderCheckResult({ conclusion: 'neutral', gated: false, author: 'alice', issues: [failed] }).summary).toContain('📏 Change coverage was not measured:\n\n```text\nthe V8 counter wrote nothing\n```');
  });

  it('the variables the tests ran with, and the workflow they came from, follow the table', () => {
    const withEnv = { ...outcome, validation: { ...outcome.validation, testEnvironment: { env: { TZ: 'America/New_York', LANG: 'en_US.utf8' }, source: '.github/workflows/test.yml, job test, step `npm test`' } } };
    expect(renderPrComment({ conclusion: 'neutral', gated: false, author: 'alice', issues: [withEnv] })).toContain(
      '🧪 Tests ran with `TZ=America/New_York` `LANG=en_US.utf8`, taken from .github/workflows/test.yml, job test, step npm test.',
    );
    expect(renderPrComment({ conclusion: 'neutral', gated: false, author: 'alice', issues: [outcome] })).not.toContain('🧪');
  });

  it('annotations on the line where the test patch defines each test failing at head, in batches of 50', () => {
    expect(annotationsFor(v, testPatch)).toEqual([
      { path: 'tests/test_swt.py', start_line: 4, end_line: 4, annotation_level: 'failure', title: 'F→F: test_combined', message: 'assertion: assert 5399 == 5400' },
    ]);
    const many = Array.from({ length: 120 }, (_, i) => i);
    expect(batches(many).map((b) => b.length)).toEqual([50, 50, 20]);
    expect(RERUN_ACTION.identifier.length).toBeLessThanOrEqual(20);
  });

  it('the ranking table on the issue', () => {
    expect(
      renderRanking(1, [
        { pr: 2, title: 't', author: 'alice', headSha: 'cccccccccc', verdict: 'likely-correct', f2p: 1, failing: 0, durationMs: 2100, diffSize: 4 },
        { pr: 3, title: 't', author: 'fixer[bot]', headSha: 'dddddddddd', verdict: 'does-not-fix', f2p: 0, failing: 1, durationMs: 2500, diffSize: 2 },
      ]),
    ).toBe(
      [
        marker('ranking'),
        '### swt-bot: 2 pull requests claim to fix #1',
        '',
        '| Rank | PR | Author | Verdict | F→P | Failing after | Run time | Diff lines | Head |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        '| 1 | #2 | alice | **likely correct** | 1 | 0 | 2.1 s | 4 | ccccccc |',
        '| 2 | #3 | fixer[bot] | does not fix | 0 | 1 | 2.5 s | 2 | ddddddd |',
        '',
        '<sub>Ranked by verdict, then by smaller diff, then by shorter run. Updated whenever one of them changes.</sub>',
      ].join('\n'),
    );
  });
});
