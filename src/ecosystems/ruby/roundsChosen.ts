/**
 * Ruby that both Ruby rounds hooks (minitest's, RSpec's) put first: `SwtRounds.chooser(plan)` gives
 * a test whose code (a method or a block), from its first line to its last (Ruby's own parser where
 * it has one), holds a line the plan names as added in its file. Pure.
 */
export const RUBY_ROUNDS_CHOOSER = `module SwtRounds
  def self.chooser(plan)
    lines = {}
    (plan['lines'] || {}).each { |f, ls| lines[File.realpath(f)] = ls if File.exist?(f) }
    lambda do |file, first, code|
      ls = file && first && File.exist?(file) && lines[File.realpath(file)]
      next false unless ls
      last = begin; RubyVM::AbstractSyntaxTree.of(code).last_lineno; rescue StandardError, NotImplementedError, NameError; first; end
      ls.any? { |n| n >= first && n <= last }
    end
  end
end`.split('\n');
