import vm from 'node:vm';
import { JEST_JSON_SOURCE } from '../../src/ecosystems/node/jestJson.js';

// jest's --json hook (src/ecosystems/node/jestJson.ts), run against a module system of its own:
// what it hands jest for @jest/test-result, and the copy it makes of results JSON cannot hold.
// Real jest 29 and 30 run it in test/integration/harness.nodeRounds.test.ts.

type Format = (results: unknown) => unknown;

function hooked() {
  const testResult: Record<string, unknown> = { formatTestResults: ((r: unknown) => r) as Format, createEmptyTestResult: () => ({}) };
  Object.defineProperty(testResult, '__esModule', { value: true });
  const other = { name: 'other' };
  const Module = { _load: (request: string) => (request === '@jest/test-result' ? testResult : other) };
  vm.runInNewContext(JEST_JSON_SOURCE.join('\n'), { require: (name: string) => (name === 'module' ? Module : undefined) });
  return { testResult, other, load: (request: string) => Module._load(request) as Record<string, unknown> };
}

const written = (results: unknown) => JSON.parse(JSON.stringify((hooked().load('@jest/test-result').formatTestResults as Format)(results)));

describe("jest's --json hook", () => {
  it('hands jest a @jest/test-result with the same exports but formatTestResults, the same one each time; other modules as they are', () => {
    const { testResult, other, load } = hooked();
    const own = load('@jest/test-result');
    expect(own).not.toBe(testResult);
    expect(load('@jest/test-result')).toBe(own);
    expect(own.createEmptyTestResult).toBe(testResult.createEmptyTestResult);
    expect(own.__esModule).toBe(true);
    expect(Object.keys(own).sort()).toEqual(['createEmptyTestResult', 'formatTestResults']);
    expect(load('jest-runner')).toBe(other);
  });

  it('leaves results JSON can hold as they are', () => {
    const results = { testResults: [{ assertionResults: [{ status: 'failed', failureDetails: [{ matcherResult: { pass: false } }] }] }] };
    expect((hooked().load('@jest/test-result').formatTestResults as Format)(results)).toBe(results);
  });

  it('writes an error that refers to itself, a BigInt, a toJSON that refers back and what nests too deep', () => {
    const error = Object.assign(new Error('boom'), { code: 'E_BOOM' }) as Error & { self?: unknown };
    error.self = error;
    const request = { url: '/x', toJSON: () => ({ url: '/x', back: request }) };
    let deep: Record<string, unknown> = { value: BigInt(3) };
    for (let i = 0; i < 100; i++) deep = { deep };
    const details = [error, { matcherResult: { actual: BigInt(1), expected: BigInt(2), pass: false } }, { request }, deep];
    const out = written({ testResults: [{ assertionResults: [{ status: 'failed', failureDetails: details }] }] });
    const [circular, bigint, toJSON, nested] = out.testResults[0].assertionResults[0].failureDetails;
    // As jest writes an error whose details are JSON: its own enumerable properties.
    expect(circular).toEqual({ code: 'E_BOOM', self: '[Circular]' });
    expect(bigint).toEqual({ matcherResult: { actual: '1', expected: '2', pass: false } });
    expect(toJSON).toEqual({ request: { url: '/x', back: '[Circular]' } });
    expect(JSON.stringify(nested)).toContain('"[Too deep]"');
    expect(out.testResults[0].assertionResults[0].status).toBe('failed');
  });
});
