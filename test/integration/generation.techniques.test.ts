/**
 * The techniques on top of the strategies, end to end: the real openai SDK against the scripted
 * OpenAI-compatible server, the host workbench (the patch layer, real pytest processes, JUnit read
 * by src/harness) on the py-durations fixture — execution feedback in LIBRO and the agent, the vote
 * on the failure reason, the stand-in fix, and the ensemble choosing with them.
 */
import { execFileSync } from 'node:child_process';
import { type FixtureRepo } from '../../src/demo/fixtureRepos.js';
import { reproduce, LlmClient } from '../../src/generation/index.js';
import { createLogger } from '../../src/util/logger.js';
import { FIXED_PARSE_DURATION, pyDurationsOnHost, scriptedClient } from '../helpers/pyDurationsOnHost.js';
import { lastMessage, msg, promptText, toolCall, type RecordedRequest, type ScriptStep, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const quietLog = createLogger({ level: 'silent' });

const testBlock = (file: string, body: string) => `\`\`\`custom-diff\ndiff\n${file}\ninsert\nEOF\nfrom durations import parse_duration\n\n\n${body}\nend diff\n\`\`\``;
/** Fails on base with the issue's ValueError, passes on the fix. */
const GOLDEN_A = testBlock('tests/test_vote_a.py', 'def test_combined_units():\n    assert parse_duration("1h30m") == 5400');
const GOLDEN_B = testBlock('tests/test_vote_b.py', 'def test_hours_and_minutes():\n    assert parse_duration("2h15m") == 8100');
/** Asserts the bug: passes on base. */
const ASSERTS_BUG = testBlock('tests/test_vote_bug.py', 'import pytest\n\n\ndef test_raises():\n    with pytest.raises(ValueError):\n        parse_duration("1h30m")');
/** Fails on base with the issue's ValueError, and on the fix too: a false reproduction. */
const FALSE_REPRO = testBlock('tests/test_false.py', 'def test_combined_units():\n    assert parse_duration("1h30m") == 5401');
const OWN_IMPORT_ERROR = testBlock('tests/test_own.py', 'from durations.parse import parse_durations\n\n\ndef test_x():\n    assert parse_durations("1h30m") == 5400');

const fixBlock = (body: string) => `\`\`\`custom-diff\ndiff\ndurations/parse.py\nrewrite\n4\n${body}\nend diff\n\`\`\``;
/** The real fix, as a model would write it: the whole function. */
const REAL_FIX = fixBlock(FIXED_PARSE_DURATION);
/** The same function alone in a plain block, as the 1.5B answers when shown the function the failure passes through. */
const REAL_FIX_PLAIN = `Here is the corrected function:\n\n\`\`\`python\n${FIXED_PARSE_DURATION}\n\`\`\``;
/** A "fix" that refuses combined units with another error: a test of them still fails, for another reason than on base. */
const WRONG_FIX = fixBlock(`def parse_duration(text):
    text = text.strip().lower()
    if not text:
        raise ValueError("empty duration")
    if text.isdigit():
        return int(text)
    unit = text[-1]
    if not text[:-1].isdigit():
        raise TypeError(f"combined units are not supported: {text!r}")
    return int(text[:-1]) * UNITS[unit]`);

const isFix = (r: RecordedRequest) => promptText(r).includes('This test reproduces the issue: it fails on the current code.');
const isJudge = (r: RecordedRequest) => promptText(r).includes('Does this failure show the problem the issue describes');
const isFeedback = (r: RecordedRequest) => lastMessage(r).content.startsWith('Your test did not reproduce the issue');

const llmFor = (server: ScriptedLlm): LlmClient => scriptedClient(server, 'sk-scripted-techniques');

/** Runs the test patch with the real fix on the host: is it a true reproduction? */
function passesAfterFix(fx: FixtureRepo, testPatch: string): boolean {
  try {
    execFileSync('git', ['apply', '-'], { cwd: fx.dir, input: fx.instance.patch });
    execFileSync('git', ['apply', '-'], { cwd: fx.dir, input: testPatch });
    const files = [...testPatch.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1]!);
    execFileSync('python3', ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', ...files], { cwd: fx.dir, encoding: 'utf8' });
    return true;
  } catch {
    return false;
  } finally {
    execFileSync('git', ['reset', '-q', '--hard'], { cwd: fx.dir });
    execFileSync('git', ['clean', '-qfd'], { cwd: fx.dir });
  }
}

describe('generation techniques end to end (py-durations, pytest on the host)', () => {
  const host = pyDurationsOnHost();
  let server: ScriptedLlm;

  describe('a vote on the failure reason (zero-shot-plus vote=3)', () => {
    it('draws 3 samples at T=0.7 with seeds 1, 2, 3 and keeps the test of the reason most share', async () => {
      const answers = [ASSERTS_BUG, GOLDEN_B, GOLDEN_A];
      let next = 0;
      server = await host.serve(() => msg(answers[next++]!));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', vote: { samples: 3 }, llm: llmFor(server), logger: quietLog });
      expect(server.requests.map((q) => [q.body.seed, q.body.temperature])).toEqual([[1, 0.7], [2, 0.7], [3, 0.7]]);
      expect(r.status).toBe('reproduced');
      // Samples 2 and 3 share the issue's ValueError; sample 2 comes first among equals.
      expect(r.testPatch).toContain('tests/test_vote_b.py');
      expect(r.reason).toMatch(/sample 2: its failure reason is shared by 2 of 3 samples/);
      expect(r.evidence?.vote).toEqual({ agree: 2, samples: 3 });
      expect((r.evidence?.details as { vote: { groups: unknown[] } }).vote.groups).toEqual([{ reason: 'issue-exception:ValueError', samples: [1, 2] }]);
      expect(r.evidence?.runs).toHaveLength(2);
      expect(passesAfterFix(host.fx, r.testPatch)).toBe(true);
    });

    it('a test that passes on base never wins, even when most samples are that test', async () => {
      const answers = [ASSERTS_BUG, ASSERTS_BUG, GOLDEN_A];
      let next = 0;
      server = await host.serve(() => msg(answers[next++]!));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', vote: { samples: 3 }, llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('reproduced');
      expect(r.testPatch).toContain('tests/test_vote_a.py');
      expect(r.evidence?.vote).toEqual({ agree: 1, samples: 3 });
    });

    it('with every sample passing on base nothing is posted', async () => {
      server = await host.serve(() => msg(ASSERTS_BUG));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', vote: { samples: 2 }, llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('not-reproduced');
      expect(r.reason).toMatch(/none of the 2 sample\(s\) fails on base for the issue's reason/);
      expect(server.requests).toHaveLength(2);
    });
  });

  describe('execution feedback in LIBRO and the agent', () => {
    it('LIBRO: a sample failing by its own ImportError goes back with the run; the revision counts as the sample', async () => {
      server = await host.serve((req): ScriptStep => (isJudge(req) ? msg('YES. The combined-units ValueError.') : isFeedback(req) ? msg(GOLDEN_A) : msg(OWN_IMPORT_ERROR)));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'libro', libro: { samples: 2 }, feedback: { rounds: 1 }, llm: llmFor(server), logger: quietLog });
      const feedback = server.requests.filter(isFeedback);
      // Sample 2 repeats sample 1's answer: it counts as that sample, revised once.
      expect(feedback).toHaveLength(1);
      expect(lastMessage(feedback[0]!).content).toMatch(/its own error.*ImportError/s);
      expect(feedback[0]!.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(r.status).toBe('reproduced');
      expect(r.testPatch).toContain('tests/test_vote_a.py');
      expect(server.requests.filter(isJudge)).toHaveLength(1);
    });

    it('LIBRO with libro=vote: no judge, the vote chooses', async () => {
      const answers = [GOLDEN_A, ASSERTS_BUG, GOLDEN_B];
      let next = 0;
      server = await host.serve(() => msg(answers[next++]!));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'libro', libro: { samples: 3, select: 'vote' }, llm: llmFor(server), logger: quietLog });
      expect(server.requests.filter(isJudge)).toHaveLength(0);
      expect(server.requests.map((q) => q.body.seed)).toEqual([1, 2, 3]);
      expect(r.status).toBe('reproduced');
      expect(r.reason).toMatch(/sample 1, of the failure reason 2 of 2 failing sample\(s\) share/);
      expect(r.evidence?.vote).toEqual({ agree: 2, samples: 3 });
    });

    it('agent: a submitted test that passes on base is told to flip; after the submit limit one feedback round revises it', async () => {
      const bugFile = 'import pytest\nfrom durations import parse_duration\n\n\ndef test_raises():\n    with pytest.raises(ValueError):\n        parse_duration("1h30m")\n';
      const steps: ScriptStep[] = [
        toolCall('write_file', { path: 'tests/test_issue_repro.py', content: bugFile }),
        toolCall('submit', {}),
        toolCall('submit', {}),
        msg('tests/test_issue_repro.py\n```python\nfrom durations import parse_duration\n\n\ndef test_combined_units():\n    assert parse_duration("1h30m") == 5400\n```'),
      ];
      server = await host.serve(steps);
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'agent', feedback: { rounds: 1 }, llm: llmFor(server), logger: quietLog });
      expect(lastMessage(server.requests[2]!).content).toMatch(/Verification rejected the submitted test: .*PASSES on the current, buggy code.*Turn it around/s);
      const last = server.requests[3]!;
      expect(isFeedback(last)).toBe(true);
      expect(last.body.tools).toBeUndefined();
      expect(r.status).toBe('reproduced');
      expect((r.evidence?.details as { feedbackRounds: number; submits: number })).toMatchObject({ feedbackRounds: 1, submits: 2 });
      expect(passesAfterFix(host.fx, r.testPatch)).toBe(true);
    });
  });

  describe('a stand-in fix written by the model (fix=…)', () => {
    it('a test that passes with the model’s fix is posted, and the check says so', async () => {
      server = await host.serve((req) => msg(isFix(req) ? REAL_FIX_PLAIN : GOLDEN_A));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', fixCheck: { mode: 'demote' }, llm: llmFor(server), logger: quietLog });
      expect(r.status).toBe('reproduced');
      expect(r.evidence?.fixCheck).toMatchObject({ verdict: 'flips', fixFiles: ['durations/parse.py'] });
      const fixPrompt = server.requests.find(isFix)!.body.messages[0].content as string;
      expect(fixPrompt).toContain('[start of durations/parse.py]');
      expect(fixPrompt).toContain('+    assert parse_duration("1h30m") == 5400');
      expect(fixPrompt).toContain("ValueError: invalid literal for int() with base 10: '1h30'");
      // The function the run's traceback passes through, shown whole and asked for alone: the answer is placed by name.
      expect(fixPrompt).toMatch(/The failure passes through `parse_duration` of durations\/parse\.py \(line \d+\):\n```\ndef parse_duration\(text\):\n/);
      expect(fixPrompt).toContain('write `parse_duration` again, corrected, the whole function');
      expect(host.wb.log).toContain('runTests with a fix');
    });

    it('a false reproduction (it fails on the fix too) is not posted; the test and why are kept', async () => {
      server = await host.serve((req) => msg(isFix(req) ? REAL_FIX : FALSE_REPRO));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', fixCheck: { mode: 'demote' }, llm: llmFor(server), logger: quietLog });
      expect(passesAfterFix(host.fx, r.testPatch)).toBe(false);
      expect(r.status).toBe('not-reproduced');
      expect(r.reason).toMatch(/^not posted: the test also fails with a fix the model wrote \(tests\/test_false.py::test_combined_units: .*5401/);
      expect(r.testPatch).toContain('5401');
      expect(r.evidence?.fixCheck?.verdict).toBe('fails-on-fix');
    });

    it('require: with no usable fix (prose), nothing is posted; demote lets it stand unconfirmed', async () => {
      server = await host.serve((req) => msg(isFix(req) ? 'The fix is to loop over the units.' : GOLDEN_A));
      const required = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', fixCheck: { mode: 'require' }, llm: llmFor(server), logger: quietLog });
      expect(required.status).toBe('not-reproduced');
      expect(required.reason).toMatch(/^not posted: unconfirmed \(the stand-in fix changes no source file/);
      const demoted = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', fixCheck: { mode: 'demote' }, llm: llmFor(server), logger: quietLog });
      expect(demoted.status).toBe('reproduced');
      expect(demoted.evidence?.fixCheck?.verdict).toBe('no-fix');
    });

    it('the ensemble goes on past a test that fails on the stand-in fix and takes the one that flips', async () => {
      let fixes = 0;
      server = await host.serve((req) => msg(isFix(req) ? (fixes++ === 0 ? WRONG_FIX : REAL_FIX) : GOLDEN_A));
      const r = await reproduce(host.wb, host.fx.issue, { strategy: 'ensemble', ensemble: { order: ['snippet', 'zero-shot-plus'] }, fixCheck: { mode: 'demote' }, llm: llmFor(server), logger: quietLog });
      expect(r.attempts?.map((a) => [a.strategy, a.status, a.evidence?.fixCheck?.verdict])).toEqual([
        ['snippet', 'not-reproduced', 'fails-on-fix'],
        ['zero-shot-plus', 'reproduced', 'flips'],
      ]);
      expect(r.strategy).toBe('ensemble(zero-shot-plus)');
      expect(r.status).toBe('reproduced');
    });
  });
});
