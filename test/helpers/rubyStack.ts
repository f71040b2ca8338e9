/**
 * TEST HELPER. A small real RSpec project (a Gemfile naming rspec, `.rspec` requiring the spec
 * helper): its files at base, the fix, and a test patch adding a spec file whose one example goes
 * F→P. One definition for the Ruby integration test and bench:harness.
 */

import { newFilePatch } from './patches.js';

export const BASE_FILES: Record<string, string> = {
  Gemfile: "source 'https://rubygems.org'\ngem 'rspec', '~> 3.0'\n",
  '.rspec': '--require spec_helper\n',
  'lib/stack.rb': 'class Stack\n  def initialize = @items = []\n  def push(x) = @items.push(x)\n  def peek = @items.first\nend\n',
  'spec/spec_helper.rb': "require_relative '../lib/stack'\n",
  'spec/stack_spec.rb': "RSpec.describe Stack do\n  it 'peeks at an only item' do\n    s = Stack.new\n    s.push(1)\n    expect(s.peek).to eq(1)\n  end\nend\n",
};

export const FIX: Record<string, string> = {
  'lib/stack.rb': 'class Stack\n  def initialize = @items = []\n  def push(x) = @items.push(x)\n  def peek = @items.last\nend\n',
};

const ADDED = [
  'RSpec.describe Stack do',
  "  describe '#peek' do",
  "    it 'returns the last item pushed' do",
  '      s = Stack.new',
  '      s.push(1)',
  '      s.push(2)',
  '      expect(s.peek).to eq(2)',
  '    end',
  '  end',
  'end',
];

export const TEST_PATCH = newFilePatch('spec/stack_peek_spec.rb', ADDED);

/** The example the test patch adds. */
export const ADDED_ID = 'spec/stack_peek_spec.rb > Stack#peek returns the last item pushed';
