/** bench:generate's figures from eval rows: S, what would be posted, and which of that is false. */
import { outcomeRow, strategyFigures } from '../../bench/generateFigures.js';
import type { InstanceResult, ResultTest } from '../../src/eval/report.js';

const test = (base: 'pass' | 'fail', head: 'pass' | 'fail', flaky = false): ResultTest => ({
  id: 't',
  base,
  head,
  transition: `${base === 'pass' ? 'P' : 'F'}2${head === 'pass' ? 'P' : 'F'}` as ResultTest['transition'],
  flaky,
});
const row = (id: string, status: string, tests: ResultTest[], usage = { promptTokens: 1000, completionTokens: 200, costUsd: 0, wallMs: 5000 }): InstanceResult => ({
  instance_id: id,
  applied: tests.length > 0,
  success: tests.some((t) => t.transition === 'F2P') && !tests.some((t) => t.head === 'fail' && !t.flaky),
  likelyCorrect: false,
  tests,
  reproduction: { strategy: 'zero-shot-plus', status, reason: '', usage },
  durationMs: 60_000,
});

it('counts S, the posted reproductions and the false ones (a posted test that also fails on the fix)', () => {
  const f = strategyFigures('zero-shot-plus', [
    row('a', 'reproduced', [test('fail', 'pass')]),
    row('b', 'reproduced', [test('fail', 'fail')]),
    row('c', 'not-reproduced', [test('pass', 'pass')]),
    row('d', 'reproduced', [test('fail', 'pass'), test('fail', 'fail', true)]),
  ]);
  expect(f).toMatchObject({ instances: 4, S: 50, W: 100, posted: 3, falseReproductions: 1, falseIds: ['b'], solved: ['a', 'd'], tokensPerInstance: 1200, secondsPerInstance: 60 });
});

it('an instance with nothing generated counts as a miss, with no tokens', () => {
  const f = strategyFigures('snippet', [{ ...row('a', 'not-reproduced', []), reproduction: { strategy: 'snippet', status: 'not-reproduced', reason: 'no snippet' } }]);
  expect(f).toMatchObject({ S: 0, W: 0, posted: 0, falseReproductions: 0, tokensPerInstance: 0 });
});

it('a per-instance row gives the outcome, S, tokens (prompt + answer), seconds and why, escaped for markdown', () => {
  const r = { ...row('a', 'not-reproduced', [test('fail', 'fail')]), reproduction: { strategy: 'zero-shot-plus', status: 'not-reproduced', reason: 'not posted: the test also fails | on the fix\nsecond line', usage: { promptTokens: 2490, completionTokens: 512, costUsd: 0, wallMs: 1 } } };
  expect(outcomeRow('ensemble:fix=demote', r)).toBe('| ensemble:fix=demote | a | not-reproduced |  | 2490 + 512 | 60 | not posted: the test also fails \\| on the fix second line |');
});

it('counts the stand-in fix verdicts the eval rows carry', () => {
  const checked = (id: string, status: string, fixCheck: string) => ({ ...row(id, status, [test('fail', 'pass')]), reproduction: { strategy: 'zero-shot-plus', status, reason: '', fixCheck } });
  const f = strategyFigures('zero-shot-plus:fix=demote', [checked('a', 'reproduced', 'flips'), checked('b', 'not-reproduced', 'fails-on-fix'), checked('c', 'reproduced', 'no-fix'), row('d', 'not-reproduced', [])]);
  expect(f.fixCheck).toEqual({ flips: 1, failsOnFix: 1, noFix: 1 });
  expect(f.posted).toBe(2);
});
