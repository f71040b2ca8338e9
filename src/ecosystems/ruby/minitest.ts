/**
 * minitest: swt's own reporter (a minitest plugin loaded with RUBYOPT=-r, one JSON line per
 * result, `{"done":true}` at the end) and its parser. minitest prints no structured report by
 * itself and minitest-reporters (when a project uses it) replaces minitest's reporters at start,
 * so ours adds itself after every plugin has run. Pure.
 */
import { failureKindOf, firstLines, mergeDuplicates, normalizeRel, resolveFile } from '../../results/formats/common.js';
import type { TestResult } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

export const MINITEST_REPORTER_FILE = 'swt_minitest_reporter.rb';
/** The environment variable naming the report file the reporter appends to. */
export const MINITEST_REPORT_ENV = 'SWT_MINITEST_REPORT';

/** The reporter's Ruby source (minitest 5.x; Ruby 2.x and 3.x). */
export const MINITEST_REPORTER_SOURCE = `# swt-bot: one JSON line per minitest result, to $${MINITEST_REPORT_ENV}.
require 'json'
require 'minitest'
module SwtMinitest
  class Reporter < Minitest::AbstractReporter
    def initialize(path)
      super()
      @io = File.open(path, 'a')
      @io.sync = true
    end
    def record(result)
      klass = result.respond_to?(:klass) ? result.klass : result.class.name
      file, line = result.respond_to?(:source_location) ? result.source_location : [nil, nil]
      status = if result.skipped? then 'skipped' elsif result.error? then 'error' elsif result.passed? then 'passed' else 'failed' end
      failure = result.failure
      @io.puts(JSON.generate({ 'class' => klass.to_s, 'name' => result.name.to_s, 'status' => status, 'file' => file, 'line' => line, 'message' => failure && "#{failure.class}: #{failure.message}"[0, 2000] }))
    end
    def report
      @io.puts(JSON.generate({ 'done' => true }))
      @io.close
    end
  end
  module Init
    def init_plugins(options)
      super
      path = ENV['${MINITEST_REPORT_ENV}']
      reporter << Reporter.new(path) if path && !path.empty? && reporter
    end
  end
end
Minitest.singleton_class.prepend(SwtMinitest::Init)
`;

/** The reporter as one shell-safe line (statements joined with `;`), as the test command carries it. */
export function minitestReporterOneLine(): string {
  return MINITEST_REPORTER_SOURCE.split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .join('; ');
}

interface Line {
  class?: string;
  name?: string;
  status?: string;
  file?: string | null;
  message?: string | null;
  done?: boolean;
}

/** `test/x_test.rb > Class#test_name`: the file, then minitest's own name for the test. */
export function minitestId(file: string | undefined, klass: string, name: string): string {
  return [file, `${klass}#${name}`].filter(Boolean).join(' > ');
}

export function parseMinitestJsonl(content: string, ctx: ReportContext): OneReport {
  const tests: TestResult[] = [];
  let done = false;
  for (const raw of content.split('\n')) {
    if (!raw.trim()) continue;
    let l: Line;
    try {
      l = JSON.parse(raw) as Line;
    } catch {
      continue; // a line cut short by a killed run
    }
    if (l.done) {
      done = true;
      continue;
    }
    if (typeof l.class !== 'string' || typeof l.name !== 'string') continue;
    // The file the test's method is defined in; a test inherited from a helper is the run file's.
    const own = l.file ? resolveFile(l.file, ctx) : undefined;
    const requested = ctx.file ? normalizeRel(ctx.file) : undefined;
    const file = own && (!requested || ctx.files.map(normalizeRel).includes(own)) ? own : requested ?? own;
    const t: TestResult = { id: minitestId(file, l.class, l.name), outcome: 'passed' };
    if (file) t.file = file;
    if (l.status === 'failed' || l.status === 'error') {
      t.outcome = 'failed';
      const text = l.message ?? '';
      const raised = text.replace(/^Minitest::UnexpectedError: /, '');
      t.failureKind = l.status === 'failed' ? 'assertion' : failureKindOf(raised, /^([\w:]+):/.exec(raised)?.[1]);
      const m = firstLines(text.replace(/^Minitest::(Assertion|UnexpectedError): /, ''));
      if (m) t.message = m;
    } else if (l.status === 'skipped') {
      t.outcome = 'skipped';
      const m = firstLines((l.message ?? '').replace(/^Minitest::Skip: /, ''), 2, 200);
      if (m) t.message = m;
    }
    tests.push(t);
  }
  return { tests: mergeDuplicates(tests), fileErrors: [], complete: done, errors: [] };
}
