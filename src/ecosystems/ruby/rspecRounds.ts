/**
 * RSpec 3's confirmation rounds inside the first run (RunnerDef.roundsInProcess). A file RSpec
 * requires (`--require` by SPEC_OPTS, after the project's own) adds, once the suite starts, an
 * `after(:suite)` hook, which RSpec runs before the project's own: the suite's set-up still stands.
 * Per round it runs copies of the chosen examples (`Example#duplicate_with`, so the run's own
 * results stay as they were) through their groups, as `-e` would (before/after(:context) hooks,
 * `let`s and the project's ordering), with RSpec's own JSON formatter writing the run's `--out`
 * path plus `.round<N>` (roundReport). The run's exit status stays as it was (a round's error is
 * caught). A new process per round would pay Ruby's and RSpec's start again (minitest's cost more
 * than the run itself).
 *
 * Chosen: the examples that ran whose block holds an added line (roundsChosen). Class-level and
 * global state carries over: a round that differs from the run proves nothing (freshProcess false);
 * its test reruns in new processes, which decide. A run of one file only (RSpec runs a file per
 * process here): harness roundsInProcess. RSpec 2 gets no round.
 * Pure.
 */
import { ROUNDS_HOOK_DIR, ROUNDS_PLAN_FILE, ROUND_REPORT_SUFFIX, roundReport, writeRoundsHook } from '../command.js';
import type { RunnerDef } from '../types.js';
import { RUBY_ROUNDS_CHOOSER } from './roundsChosen.js';

export const RSPEC_ROUNDS_FILE = `${ROUNDS_HOOK_DIR}/rspec-rounds.rb`;

export const RSPEC_ROUNDS_SOURCE = [...RUBY_ROUNDS_CHOOSER, ...`return unless ENV['SWT_ROUNDS'] && defined?(RSpec::Core::Version) && RSpec::Core::Version::STRING.start_with?('3.')
RSpec.configure do |config|
  config.before(:suite) do
    RSpec.configuration.after(:suite) do
      begin
        next if ENV['SWT_ROUNDS_RAN']
        ENV['SWT_ROUNDS_RAN'] = '1'
        require 'json'
        require 'rspec/core/formatters/json_formatter'
        json = RSpec.configuration.formatters.select { |f| f.is_a?(RSpec::Core::Formatters::JsonFormatter) && f.output.respond_to?(:path) }.last
        next unless json
        plan = JSON.parse(File.read(ENV['SWT_ROUNDS']))
        added = SwtRounds.chooser(plan)
        world = RSpec.world
        groups = world.example_groups.flat_map(&:descendants)
        chosen = groups.flat_map(&:examples).select { |ex| ex.execution_result.status && added.call(ex.metadata[:absolute_file_path], ex.metadata[:line_number], ex.metadata[:block]) }
        next if chosen.empty?
        saved = [world.instance_variable_get(:@filtered_examples), world.wants_to_quit, world.non_example_failure, RSpec.current_scope]
        forget = -> { groups.each { |g| g.instance_variable_set(:@descendant_filtered_examples, nil) } }
        begin
          (1..plan['rounds'].to_i).each do |r|
            copies = []
            begin
              copies = chosen.map(&:duplicate_with)
              world.instance_variable_set(:@filtered_examples, Hash.new { |h, g| h[g] = g.examples.select { |e| copies.include?(e) } })
              world.wants_to_quit = false
              forget.call
              out = File.open(json.output.path + '${ROUND_REPORT_SUFFIX}' + r.to_s, 'w')
              reporter = RSpec::Core::Reporter.new(RSpec.configuration)
              reporter.register_listener(RSpec::Core::Formatters::JsonFormatter.new(out), :message, :dump_summary, :dump_profile, :stop, :seed, :close)
              tops = world.example_groups.select { |g| g.descendant_filtered_examples.any? }
              reporter.report(copies.size) { |rep| tops.each { |g| g.run(rep) } }
            ensure
              copies.each { |c| c.example_group.examples.delete(c) }
              out.close if out && !out.closed?
            end
          end
        ensure
          world.instance_variable_set(:@filtered_examples, saved[0])
          world.wants_to_quit = saved[1]
          world.non_example_failure = saved[2]
          RSpec.current_scope = saved[3]
          forget.call
        end
      rescue StandardError, ScriptError => e
        warn "swt: rspec rounds: #{e.message}"
      end
    end
  end
end`.split('\n')];

/** RSpec's rounds: the file SPEC_OPTS has RSpec require, the plan by environment. */
export const rspecRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  prepare: (_out, plan) => ` ${writeRoundsHook(RSPEC_ROUNDS_FILE, RSPEC_ROUNDS_SOURCE, plan)} && export SWT_ROUNDS=${ROUNDS_PLAN_FILE} SPEC_OPTS="--require ${RSPEC_ROUNDS_FILE} $SPEC_OPTS";`,
  report: roundReport,
  // The file could not be read: RSpec stops before any example.
  hookFailed: /cannot load such file -- \S*rspec-rounds/,
  freshProcess: false,
};
