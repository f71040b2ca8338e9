/**
 * A head that changes test machinery (here pytest's conftest.py), in real containers: its tests
 * run with the base's where they can (a fix that also tidies conftest.py: a trusted verdict), and
 * with its own only when base's cannot run them on it (a fix that renames what base's conftest.py
 * imports): a verdict still, flagged and never likely correct, said in the CLI's notes, the check
 * and the comment.
 */
import { gateConclusion, fixFilterPasses } from '../../src/github/decide.js';
import type { IssueOutcome } from '../../src/github/outcome.js';
import { renderCheckResult, renderPrComment } from '../../src/github/render.js';
import { DEFAULT_APP_SETTINGS } from '../../src/config/repoConfig.js';
import { renderNotesText } from '../../src/pipeline/notes.js';
import { candidateVerdict } from '../../src/pipeline/rank.js';
import { validate, type ValidationResult } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';
import { createGitRepo } from '../helpers/gitRepo.js';

const BASE = {
  'calc.py': 'def add(a, b):\n    return a - b\n\n\ndef legacy_zero():\n    return 0\n',
  'conftest.py': 'import pytest\n\nfrom calc import legacy_zero\n\n\n@pytest.fixture\ndef zero():\n    return legacy_zero()\n',
  'tests/test_calc.py': 'from calc import add\n\n\ndef test_zero(zero):\n    assert add(zero, 0) == 0\n',
};
const TEST_PATCH = [
  'diff --git a/tests/test_calc.py b/tests/test_calc.py',
  '--- a/tests/test_calc.py',
  '+++ b/tests/test_calc.py',
  '@@ -3,3 +3,7 @@ from calc import add',
  ' ',
  ' def test_zero(zero):',
  '     assert add(zero, 0) == 0',
  '+',
  '+',
  '+def test_adds_two():',
  '+    assert add(1, 2) == 3',
  '',
].join('\n');
const FIXED_ADD = 'def add(a, b):\n    return a + b\n';

afterAll(cleanUpEcosystemRuns);

async function run(fix: Record<string, string>): Promise<ValidationResult> {
  const repo = createGitRepo(BASE);
  const base = repo.sha;
  const head = repo.commit(fix, 'fix add');
  return validate(createDockerSandbox(), { repo: repo.path, base, head, testPatch: TEST_PATCH, image: 'python:3.11', install: '', testCmd: 'python3 -m pytest -p no:cacheprovider {files}' });
}

const byId = (v: ValidationResult) => Object.fromEntries(v.tests.map((t) => [t.id, t.transition]));
const outcome = (v: ValidationResult): IssueOutcome => ({
  issue: 1,
  kind: 'validated',
  validation: { tests: v.tests, counts: v.counts, success: v.success, likelyCorrect: v.likelyCorrect, base: v.base, head: v.head, durationMs: v.durationMs, warnings: v.warnings, ...(v.machinery ? { machinery: v.machinery } : {}) },
  reproduction: { strategy: 'zero-shot-plus', sha: v.base, testPatch: TEST_PATCH },
});

describe('validate: a head that changes test machinery (real containers)', () => {
  it("a fix that also edits conftest.py runs with the base's conftest.py: F→P, likely correct, and says so", async () => {
    const v = await run({ 'calc.py': `${FIXED_ADD}\n\ndef legacy_zero():\n    return 0\n`, 'conftest.py': `# fixtures for the calc tests\n${BASE['conftest.py']}` });
    expect(v.machinery).toEqual({ changed: ['conftest.py'], used: 'base' });
    expect(byId(v)).toEqual({ 'tests/test_calc.py::test_adds_two': 'F2P', 'tests/test_calc.py::test_zero': 'P2P' });
    expect(v.success).toBe(true);
    expect(v.likelyCorrect).toBe(true);
    expect(renderNotesText(v)).toContain("test machinery: the head changes conftest.py; its tests ran with the base's (the head's set aside)");
    expect(candidateVerdict(v)).toBe('likely-correct');
  });

  it("a fix whose conftest.py change it needs (base's imports what the fix removes) gets a verdict with its own, flagged, never likely correct", async () => {
    const v = await run({ 'calc.py': FIXED_ADD, 'conftest.py': 'import pytest\n\n\n@pytest.fixture\ndef zero():\n    return 0\n' });
    expect(v.machinery).toEqual({ changed: ['conftest.py'], used: 'head' });
    // The verdict is there: the test moves, and the old one still passes.
    expect(byId(v)).toEqual({ 'tests/test_calc.py::test_adds_two': 'F2P', 'tests/test_calc.py::test_zero': 'P2P' });
    expect(v.success).toBe(true);
    expect(v.likelyCorrect).toBe(false);
    expect(candidateVerdict(v)).toBe('own-set-up');
    expect(renderNotesText(v)).toContain('test machinery: NOT TRUSTED: the head changes conftest.py and the tests could not run on it with the base\'s, so they ran with the head\'s own set-up (never likely correct)');
    // A bot's PR (gated by default) fails the gate, and the check and the comment say why.
    const o = outcome(v);
    expect(fixFilterPasses([o])).toBe(false);
    const { conclusion, gated } = gateConclusion('fixer[bot]', fixFilterPasses([o]), DEFAULT_APP_SETTINGS.gate);
    expect([conclusion, gated]).toEqual(['failure', true]);
    const check = renderCheckResult({ conclusion, gated, author: 'fixer[bot]', issues: [o] });
    expect(check.summary).toContain("does not pass (for #1 the tests ran with the head's own test set-up, which it does not trust)");
    const comment = renderPrComment({ conclusion, gated, author: 'fixer[bot]', issues: [o] });
    expect(comment).toContain("⚠️ **Not trusted: the tests ran with the head's own test set-up.** This head changes test machinery (`conftest.py`), and the tests could not run on it with the base's.");
  });
});
