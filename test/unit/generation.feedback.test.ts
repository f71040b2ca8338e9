/** What a model is told when its test did not reproduce the issue (execution feedback), and when it is told at all. */
import { feedbackPrompt, feedbackRounds } from '../../src/generation/feedback.js';
import type { CandidateResult } from '../../src/generation/candidate.js';
import type { ChatModel } from '../../src/generation/llmTypes.js';
import { AFTER_CUT_NOTE, zeroShotPlusPrompt } from '../../src/generation/prompts.js';
import { fileHead } from '../../src/generation/filePreview.js';

const candidate = (c: Partial<CandidateResult> & { reason: string }): CandidateResult => ({
  status: 'not-reproduced',
  testPatch: '',
  runs: [],
  ...c,
  evidence: { applied: false, testFiles: [], runs: [], reproducingTests: [], notes: [], ...c.evidence },
});

describe('execution feedback', () => {
  it('a compile error goes back with what the run printed', () => {
    const p = feedbackPrompt(candidate({ reason: 'the test fails because of its own error: collection', failureExcerpt: './clamp_test.go:4:2: "fmt" imported and not used' }));
    expect(p).toMatch(/^Your test did not reproduce the issue: the test fails because of its own error: collection/);
    expect(p).toContain('What the test run printed:\n```text\n./clamp_test.go:4:2: "fmt" imported and not used\n```');
    expect(p).toMatch(/not an import error, an unused import or a syntax error/);
    expect(p).not.toMatch(/PASSES/);
  });

  it('an answer that was no test file is asked for one whole file in a fence', () => {
    const p = feedbackPrompt(candidate({ reason: 'the patch does not apply', evidence: { applied: false, testFiles: [], runs: [], reproducingTests: [], notes: [], applyErrors: ['PATCH_MALFORMED: found neither custom diff blocks'] } }));
    expect(p).toMatch(/could not be turned into a test file \(PATCH_MALFORMED: found neither custom diff blocks\)\. Give the whole test file in one fenced code block/);
  });

  it('a test that passes on base (it asserts the bug) is told to flip its assertion', () => {
    const run = { exitCode: 0, timedOut: false, durationMs: 10, failures: [], passed: 1 };
    const p = feedbackPrompt(candidate({ reason: 'all 1 new test(s) pass on base: they do not show the issue', evidence: { applied: true, testFiles: ['t.py'], runs: [run], reproducingTests: [], notes: [] } }));
    expect(p).toMatch(/Your test PASSES on the current, buggy code.*Turn it around/s);
  });

  it('an answer cut at the answer limit is told so, before what its run printed', () => {
    const c = candidate({ reason: 'the test fails because of its own error: collection', failureExcerpt: "constraints_test.go:57:38: missing ',' before newline" });
    expect(feedbackPrompt(c, { cut: true })).toMatch(/^Your test did not reproduce the issue: [^\n]*\n\nYour answer was cut off at the answer limit, so the file is incomplete \(a copy of the tests already in the repository, or the same check written again and again\)\. Write a new file holding only the new test, with its imports and one or two checks/);
    expect(feedbackPrompt(c)).not.toMatch(/cut off/);
  });

  it('the prompt asked afresh after a cut shows each existing test file by its first lines, and says why', () => {
    const test = { path: 'test/test.js', content: Array.from({ length: 80 }, (_, i) => `line ${i + 1}`).join('\n'), score: 1, truncated: false };
    expect(fileHead(test, 30)).toEqual({ path: 'test/test.js', content: Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n'), score: 1, truncated: true });
    // A file one line over is shown whole: cutting it would save nothing.
    const short = { path: 't.py', content: 'a\nb\nc', score: 1, truncated: false };
    expect(fileHead(short, 2)).toBe(short);
    const prompt = zeroShotPlusPrompt({ issue: { title: 't', body: 'b' }, sources: [], tests: [fileHead(test, 30)], testCommand: 'npx uvu test', language: 'javascript', answerFormat: 'whole-file' });
    expect(prompt).toContain('line 30\n… (file truncated)\n[end of test/test.js]');
    expect(prompt).not.toContain('line 31');
    expect(AFTER_CUT_NOTE).toMatch(/^An earlier answer to this ran into the answer limit/);
  });

  it('one round for a local model by default, none for a remote one, and what the options say', () => {
    const model = (local: boolean) => ({ model: 'm', temperature: 0, local, chat: async () => { throw new Error('unused'); } }) as ChatModel;
    expect(feedbackRounds({ llm: model(true), options: {} })).toBe(1);
    expect(feedbackRounds({ llm: model(false), options: {} })).toBe(0);
    expect(feedbackRounds({ llm: model(false), options: { feedback: { rounds: 2 } } })).toBe(2);
    expect(feedbackRounds({ llm: null, options: {} })).toBe(0);
  });
});
