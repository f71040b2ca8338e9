/**
 * TEST HELPER. A small real minitest project (a Gemfile naming minitest and rake, a test helper,
 * no spec directory): its files at base, the fix, and a test patch adding one test that goes F→P.
 * One definition for the Ruby integration test and bench:harness.
 */

export const BASE_FILES: Record<string, string> = {
  Gemfile: "source 'https://rubygems.org'\ngem 'minitest'\ngem 'rake'\n",
  'lib/roman.rb': "module Roman\n  def self.to_roman(n) = { 1 => 'I', 4 => 'IIII', 5 => 'V' }.fetch(n)\nend\n",
  'test/test_helper.rb': "require 'minitest/autorun'\nrequire 'roman'\n",
  'test/roman_test.rb': "require 'test_helper'\n\nclass RomanTest < Minitest::Test\n  def test_one\n    assert_equal 'I', Roman.to_roman(1)\n  end\nend\n",
};

export const FIX: Record<string, string> = {
  'lib/roman.rb': "module Roman\n  def self.to_roman(n) = { 1 => 'I', 4 => 'IV', 5 => 'V' }.fetch(n)\nend\n",
};

export const TEST_PATCH = [
  'diff --git a/test/roman_test.rb b/test/roman_test.rb',
  '--- a/test/roman_test.rb',
  '+++ b/test/roman_test.rb',
  '@@ -5,3 +5,7 @@ class RomanTest < Minitest::Test',
  "     assert_equal 'I', Roman.to_roman(1)",
  '   end',
  '+',
  '+  def test_four_is_subtractive',
  "+    assert_equal 'IV', Roman.to_roman(4)",
  '+  end',
  ' end',
  '',
].join('\n');
