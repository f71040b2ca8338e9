/**
 * A run that yields no test says why (issue 39): a plain Maven project said only "the runner
 * reported no tests for this file", uvu only "No test results". The reason carries each side's
 * exit and the end of what the runner printed, into the CLI text, the comment and the eval row.
 */
import { whyNoTests } from '../../src/harness/noTests.js';
import { renderMarkdown, renderText } from '../../src/harness/render.js';
import { verdictOf } from '../../src/harness/classify.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import type { RunResult } from '../../src/results/types.js';

const run = (output: string, exitCode: number | null, extra: Partial<RunResult> = {}): RunResult => ({ tests: [], fileErrors: [], timedOut: false, exitCode, output, durationMs: 1, ...extra });

// What uvu printed for a file whose tests never registered (its summary with nothing run).
const UVU = '\n  Total:     0\n  Passed:    0\n  Skipped:   0\n  Duration:  0.41ms\n\n';
// Surefire with no test in the module (the shape a plain Maven project gave).
const MAVEN = [
  '[INFO] --- surefire:3.2.5:test (default-test) @ greeter ---',
  '[INFO] No tests to run.',
  '[INFO] ------------------------------------------------------------------------',
  '[INFO] BUILD SUCCESS',
  '[INFO] ------------------------------------------------------------------------',
].join('\n');

describe('whyNoTests', () => {
  it('both sides printed the same: said once, with the exit code and the end of the output', () => {
    const why = whyNoTests({ base: [run(MAVEN, 0)], head: [run(MAVEN, 0)] });
    expect(why).toBe(`base and head: the runner exited with code 0 and reported no test; the end of its output:\n${MAVEN}`);
  });
  it('outputs that differ only in timings are said once (base\'s)', () => {
    const why = whyNoTests({ base: [run('no tests ran in 0.08s', 0)], head: [run('no tests ran in 0.05s', 0)] });
    expect(why).toBe('base and head: the runner exited with code 0 and reported no test; the end of its output:\nno tests ran in 0.08s');
  });
  it('sides that differ are said apart; a timeout, files that did not load and silence are named', () => {
    const why = whyNoTests({
      base: [run(UVU, 1, { fileErrors: [{ file: 'test/a.js', kind: 'collection', message: 'x' }] })],
      head: [run('', null, { timedOut: true })],
    })!;
    expect(why.split('\n')[0]).toBe('base: the runner exited with code 1 and reported no test, 1 file(s) did not load; the end of its output:');
    expect(why).toContain('  Total:     0\n  Passed:    0');
    expect(why.split('\n').pop()).toBe('head: the runner timed out and reported no test; it printed nothing');
  });
  it('keeps only the last lines of a long output', () => {
    const long = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
    const why = whyNoTests({ base: [run(long, 2)], head: [run(long, 2)] })!;
    expect(why).toContain('line 199');
    expect(why).not.toContain('line 150\n');
    expect(why.split('\n')).toHaveLength(13);
  });
  it('says nothing when a run reported a test', () => {
    expect(whyNoTests({ base: [run('', 0, { tests: [{ id: 't', name: 't', outcome: 'passed' } as RunResult['tests'][number]] })], head: [run('', 0)] })).toBeUndefined();
  });
});

describe('the reason in the text and the comment', () => {
  const v = { ...verdictOf([]), noTests: `base and head: the runner exited with code 0 and reported no test; the end of its output:\n${MAVEN}` };
  it('text: after "No test results:"', () => {
    expect(renderText(v)).toContain(`No test results: base and head: the runner exited with code 0 and reported no test; the end of its output:\n${MAVEN}\n`);
    expect(renderText(verdictOf([]))).toContain('No test results.\n');
  });
  it('markdown: in a text block that a backtick run in the output cannot close', () => {
    const md = renderMarkdown(v);
    expect(md).toContain(`_No test results._\n\n\`\`\`text\n${v.noTests}\n\`\`\`\n`);
    const tricky = renderMarkdown({ ...verdictOf([]), noTests: 'head: ```` inside' });
    expect(tricky).toContain('`````text\nhead: ```` inside\n`````');
  });
});

it('a file the report covers without a test, in a failed run: the excerpt, else the end of the output, else the exit code', () => {
  const junit = '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0"></testsuite></testsuites>';
  const parse = (output: string) =>
    parseRunReports({ kind: 'pytest', template: 'python3 -m pytest {files}' }, { files: ['tests/test_a.py'], reports: { 'junit.xml': junit }, output, exitCode: 4, timedOut: false }).fileErrors.map((e) => e.message);
  expect(parse('ERROR: usage: pytest: minversion 2.0 not met')).toEqual(['ERROR: usage: pytest: minversion 2.0 not met']);
  // Only stack frames: the excerpt drops them, the message keeps the end of the output.
  expect(parse('    at Object.<anonymous> (/testbed/x.js:1:1)')).toEqual(['the runner reported no tests for this file; the end of its output:\n    at Object.<anonymous> (/testbed/x.js:1:1)']);
  expect(parse('')).toEqual(['the runner reported no tests for this file and printed nothing (exit code 4)']);
});
