/**
 * Real answers of Qwen2.5-Coder 1.5B (captured from `swt demo --strategy zero-shot-plus` with
 * SWT_LLM_MODEL=local:qwen2.5-coder-1.5b, in test/fixtures/localModel/), replayed by the scripted
 * OpenAI-compatible server on the py-durations fixture with real pytest: what a small model
 * writes is used when it can be, sent back with what its run said when it cannot, and kept.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { LlmClient, reproduce } from '../../src/generation/index.js';
import { createLogger } from '../../src/util/logger.js';
import { pyDurationsOnHost, scriptedClient } from '../helpers/pyDurationsOnHost.js';
import { lastMessage, msg, type ScriptedLlm } from '../helpers/scriptedLlm.js';

const quietLog = createLogger({ level: 'silent' });

/** The answers of one captured run, in order. */
function captured(name: string): string[] {
  const run = JSON.parse(readFileSync(new URL(`../fixtures/localModel/${name}.json`, import.meta.url), 'utf8')) as { answers: Array<{ text: string }> };
  return run.answers.map((a) => a.text);
}

const llmFor = (server: ScriptedLlm): LlmClient =>
  scriptedClient(server, 'sk-scripted-local', { model: 'local-replay', maxRetries: 0, prices: { 'local-replay': { input: 0, output: 0 } } });
/** The same client taken for a model running in this process: the local model's defaults apply (fix=confirm). */
const asLocal = (llm: LlmClient): LlmClient => new Proxy(llm, { get: (t, k) => (k === 'local' ? true : Reflect.get(t, k, t)) });

describe('real small-model answers, replayed (py-durations, pytest on the host)', () => {
  const host = pyDurationsOnHost();
  let server: ScriptedLlm;

  it('a custom diff that rewrites the source with copied line numbers ends "could not reproduce", its raw text kept', async () => {
    const [answer] = captured('demo-zsp-1.5b-customdiff');
    server = await host.serve([msg(answer!)]);
    const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), logger: quietLog });
    expect(r.status).toBe('not-reproduced');
    expect(r.reason).toMatch(/does not apply/);
    expect(r.evidence?.answers).toEqual([expect.objectContaining({ purpose: 'zero-shot-plus', text: answer, finishReason: 'stop' })]);
  });

  // The 1.5B answered the feedback with its first test word for word: that answer is drawn once more, from the first prompt, at T 0.7 with a seed of its own.
  it('a whole test file that asserts the bug (passes on base) is caught, goes back with "it passes", a repeated answer is re-drawn, and the answer of each turn is kept', async () => {
    const answers = captured('demo-zsp-1.5b-wholefile');
    expect(answers[1]!.trim()).toBe(answers[0]!.trim());
    answers.push(answers[1]!);
    server = await host.serve(answers.map((a) => msg(a)));
    const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), answerFormat: 'whole-file', feedback: { rounds: 1 }, logger: quietLog });
    expect(r.status).toBe('not-reproduced');
    expect(r.reason).toMatch(/pass on base/);
    expect(r.testPatch).toContain('+++ b/test_parse.py');
    expect(r.testPatch).toContain('pytest.raises(ValueError)');
    const prompt = server.requests[0]!.body.messages[0].content as string;
    expect(prompt).toContain("Answer with the new file's path on one line, then one fenced code block holding the file's whole code (its imports and its test).");
    // The existing test file by its imports only: shown whole, the 1.5B copies it (devalue, humanize in bench:generate).
    expect(prompt).toContain('[start of tests/test_parse.py]\nimport pytest\n\nfrom durations import parse_duration, format_duration\n… (file truncated)\n[end of tests/test_parse.py]');
    expect(prompt).not.toContain('def test_plain_seconds');
    // The 1.5B model copied a whole existing test file, cut at its answer limit (humanize a47a89e in bench:generate).
    expect(prompt).toContain('The file is new, not one of the files above: put only your new test in it, not a copy of the tests above.');
    expect(prompt).not.toContain('custom-diff');
    const feedback = lastMessage(server.requests[1]!).content;
    expect(feedback).toMatch(/Your test PASSES on the current, buggy code/);
    expect(server.requests[1]!.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    // Drawn again from the first prompt, told why the answer failed but not shown it (in view, the 1.5B copied it again at T 0.7).
    const redrawn = server.requests[2]!.body.messages as Array<{ role: string; content: string }>;
    expect(redrawn.map((m) => m.role)).toEqual(['user']);
    expect(redrawn[0]!.content.startsWith(prompt)).toBe(true);
    expect(redrawn[0]!.content.slice(prompt.length)).toMatch(/^\n\nAn earlier answer to this did not reproduce the issue: all 1 new test\(s\) pass on base[^\n]*\nIts test PASSES on the current, buggy code: what it asserted is the wrong behaviour[\s\S]*\nWrite a different test that avoids that\.$/);
    expect(redrawn[0]!.content).not.toContain(answers[0]!.trim());
    expect(server.requests[2]!.body).toMatchObject({ temperature: 0.7, seed: 2 });
    expect(server.requests[1]!.body.temperature).not.toBe(0.7);
    expect(r.evidence?.answers?.map((a) => a.purpose)).toEqual(['zero-shot-plus', 'feedback 1', 'feedback 1 (re-drawn)']);
    expect(r.evidence?.answers?.map((a) => a.text)).toEqual(answers);
  });

  // The 1.5B model copied whole test files and ran into its 512-token limit (four of ten answers in bench:generate).
  it('an answer cut at the answer limit is followed by the prompt asked afresh, saying so; the whole new file that follows reproduces', async () => {
    const [, good] = captured('demo-zsp-1.5b-flip');
    const cutShort = good!.slice(0, good!.indexOf('assert'));
    server = await host.serve([{ kind: 'message', content: cutShort, finishReason: 'length' }, msg(good!)]);
    const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), answerFormat: 'whole-file', feedback: { rounds: 1 }, logger: quietLog });
    // At T 0 the same conversation gives the same copy again: a new one, the existing tests shown by their first lines.
    expect(server.requests[1]!.body.messages.map((m: { role: string }) => m.role)).toEqual(['user']);
    expect(lastMessage(server.requests[1]!).content).toMatch(/\[start of durations\/parse\.py\][\s\S]*An earlier answer to this ran into the answer limit: it copied the tests above, or wrote the same check again and again\./);
    expect(r.status).toBe('reproduced');
    expect(r.evidence?.answers?.map((a) => a.finishReason)).toEqual(['length', 'stop']);
  });

  // The 1.5B looped on one assert until its limit (camelcase in bench:generate: 20 ever longer `t.is(camelCase('_id_1_2…'))`):
  // the reproducing answer above in that shape, cut inside a line. The lines before the cut are used as they are.
  it('an answer cut inside a loop of asserts: its unfinished line dropped, the asserts before it reproduce with no second turn', async () => {
    const good = captured('demo-zsp-1.5b-flip')[1]!;
    const looped = `${good.slice(0, good.lastIndexOf('```'))}    assert parse_duration("2h30m") == 9000\n    assert parse_duration("3h30m") == 12600\n    assert parse_duration("4h3`;
    server = await host.serve([{ kind: 'message', content: looped, finishReason: 'length' }]);
    const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), answerFormat: 'whole-file', feedback: { rounds: 1 }, logger: quietLog });
    expect(r.status).toBe('reproduced');
    expect(server.requests).toHaveLength(1);
    expect(r.testPatch).toContain('+    assert parse_duration("3h30m") == 12600\n');
    expect(r.testPatch).not.toContain('4h3');
    expect(r.evidence?.notes).toContain('the answer was cut at the answer limit: its unfinished last line dropped');
    // The raw answer is kept as the model wrote it.
    expect(r.evidence?.answers).toEqual([expect.objectContaining({ text: looped, finishReason: 'length' })]);
  });

  it('told that its test passes on base, the model flips the assertion: reproduced, and the test passes once the fix is applied', async () => {
    const answers = captured('demo-zsp-1.5b-flip');
    server = await host.serve(answers.map((a) => msg(a)));
    const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: llmFor(server), answerFormat: 'whole-file', feedback: { rounds: 1 }, logger: quietLog });
    expect(r.status).toBe('reproduced');
    expect(r.reason).toMatch(/ValueError/);
    expect(r.testPatch).toContain('+    assert parse_duration("1h30m") == 5400');
    expect(r.evidence?.notes.join('\n')).toMatch(/feedback round 1: the first candidate did not reproduce \(all 1 new test\(s\) pass on base/);
    expect(r.evidence?.answers).toHaveLength(2);
    execFileSync('git', ['apply', '-'], { cwd: host.fx.dir, input: host.fx.instance.patch });
    execFileSync('git', ['apply', '-'], { cwd: host.fx.dir, input: r.testPatch });
    try {
      expect(execFileSync('python3', ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', 'test_parse.py'], { cwd: host.fx.dir, encoding: 'utf8' })).toMatch(/1 passed/);
    } finally {
      execFileSync('git', ['reset', '-q', '--hard'], { cwd: host.fx.dir });
      execFileSync('git', ['clean', '-qfd'], { cwd: host.fx.dir });
    }
  });

  // The 1.5B's stand-in fix rewrote parse_duration unchanged in substance (the failure stays as on base):
  // that says nothing against the test, which fails with the issue's own ValueError, so it is posted.
  it("a local model's test is confirmed by default: its stand-in fix, shown the function the traceback names, left the failure as it was; the test fails with the issue's ValueError: posted", async () => {
    const answers = captured('demo-zsp-1.5b-confirm');
    server = await host.serve(answers.map((a) => msg(a)));
    const r = await reproduce(host.wb, host.fx.issue, { strategy: 'zero-shot-plus', llm: asLocal(llmFor(server)), answerFormat: 'whole-file', feedback: { rounds: 1 }, logger: quietLog });
    expect(r.evidence?.answers?.map((a) => a.purpose)).toEqual(['zero-shot-plus', 'feedback 1', 'stand-in fix']);
    const fixPrompt = server.requests[2]!.body.messages[0].content as string;
    expect(fixPrompt).toMatch(/The failure passes through `parse_duration` of durations\/parse\.py \(line 14\):/);
    expect(r.evidence?.fixCheck).toMatchObject({ verdict: 'no-fix', reason: expect.stringMatching(/^the stand-in fix left the failure as it was \(.*ValueError: invalid literal for int\(\) with base 10: '1h30'/), fixFiles: ['durations/parse.py'] });
    expect(r.status).toBe('reproduced');
    expect(r.reason).toMatch(/the failure carries the reported ValueError/);
  });
});
