/**
 * minitest's confirmation rounds inside the first run (RunnerDef.roundsInProcess). A file Ruby
 * requires at start (RUBYOPT, after swt's reporter) registers a `Minitest.after_run` block: once
 * the run is done and reported, in the same process, it runs the chosen test methods again per
 * round (`Minitest.run_one_method`, as minitest runs each) and records them with swt's own
 * reporter into the run's report path plus `.round<N>` (roundReport). The run's exit status stays
 * as it was (a round's error is caught). A new Ruby process per round cost more than the run
 * itself (94–145 ms against 87–92 ms on a small project).
 *
 * Chosen: the runnable methods of the test classes whose lines hold an added line (roundsChosen).
 * Class-level state carries over into the rounds: a round that differs from the run proves nothing (freshProcess false);
 * its test reruns in new processes, which decide. A run of one file only (minitest runs a file per
 * process): harness roundsInProcess.
 * Pure.
 */
import { ROUNDS_HOOK_DIR, ROUNDS_PLAN_FILE, ROUND_REPORT_SUFFIX, roundReport, writeRoundsHook } from '../command.js';
import type { RunnerDef } from '../types.js';
import { MINITEST_REPORT_ENV } from './minitest.js';
import { RUBY_ROUNDS_CHOOSER } from './roundsChosen.js';

export const MINITEST_ROUNDS_FILE = `${ROUNDS_HOOK_DIR}/minitest-rounds.rb`;


export const MINITEST_ROUNDS_SOURCE = [...RUBY_ROUNDS_CHOOSER, ...`require 'json'
require 'minitest'
Minitest.after_run do
  begin
    plan_path = ENV['SWT_ROUNDS']
    report = ENV['${MINITEST_REPORT_ENV}']
    next if plan_path.nil? || report.nil? || report.empty? || ENV['SWT_ROUNDS_RAN'] || !defined?(SwtMinitest::Reporter)
    ENV['SWT_ROUNDS_RAN'] = '1'
    plan = JSON.parse(File.read(plan_path))
    added = SwtRounds.chooser(plan)
    chosen = []
    Minitest::Runnable.runnables.each do |klass|
      next unless klass < Minitest::Test
      klass.runnable_methods.each do |name|
        m = klass.instance_method(name)
        file, first = m.source_location
        chosen << [klass, name] if added.call(file, first, m)
      end
    end
    next if chosen.empty?
    (1..plan['rounds'].to_i).each do |r|
      rep = SwtMinitest::Reporter.new(report + '${ROUND_REPORT_SUFFIX}' + r.to_s)
      chosen.each { |klass, name| rep.record(Minitest.run_one_method(klass, name)) }
      rep.report
    end
  rescue StandardError, ScriptError => e
    warn "swt: minitest rounds: #{e.message}"
  end
end`.split('\n')];

/** minitest's rounds: the file Ruby requires at start, the plan by environment. */
export const minitestRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  prepare: (_out, plan) => ` ${writeRoundsHook(MINITEST_ROUNDS_FILE, MINITEST_ROUNDS_SOURCE, plan)} && export SWT_ROUNDS=${ROUNDS_PLAN_FILE} RUBYOPT="-r${MINITEST_ROUNDS_FILE} $RUBYOPT";`,
  report: roundReport,
  // The file could not be read: Ruby stops before the script.
  hookFailed: /cannot load such file -- \S*minitest-rounds/,
  freshProcess: false,
};
