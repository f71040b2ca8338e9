/**
 * TEST HELPER. A small real Go module (example.com/clampx) needing github.com/google/go-cmp from the
 * module proxy: its files at base, the fixed source, and test patches. One definition for the Go
 * integration test and bench:harness.
 */

export const GO_MOD = 'module example.com/clampx\n\ngo 1.21\n\nrequire github.com/google/go-cmp v0.6.0\n';
export const GO_SUM = [
  'github.com/google/go-cmp v0.6.0 h1:ofyhxvXcZhMsU5ulbFiLKl/XBFqE1GSq7atu8tAmTRI=',
  'github.com/google/go-cmp v0.6.0/go.mod h1:17dUlkBOakJ0+DkrSSNjCkIjxS6bF9zb3elmeNGIjoY=',
  '',
].join('\n');
export const BUGGY = 'package clampx\n\n// Clamp limits x to [lo, hi].\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n';
export const FIXED = 'package clampx\n\n// Clamp limits x to [lo, hi].\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n\n// Abs is |x|.\nfunc Abs(x int) int {\n\tif x < 0 {\n\t\treturn -x\n\t}\n\treturn x\n}\n';
export const OLD_TEST = [
  'package clampx',
  '',
  'import (',
  '\t"testing"',
  '',
  '\t"github.com/google/go-cmp/cmp"',
  ')',
  '',
  'func TestClampInside(t *testing.T) {',
  '\tif d := cmp.Diff(5, Clamp(5, 0, 10)); d != "" {',
  '\t\tt.Error(d)',
  '\t}',
  '}',
  '',
].join('\n');

/** A test patch that appends `lines` (a new test function) to clampx_test.go. */
export const appendTest = (lines: string[]) =>
  [
    'diff --git a/clampx_test.go b/clampx_test.go',
    '--- a/clampx_test.go',
    '+++ b/clampx_test.go',
    `@@ -11,3 +11,${3 + lines.length + 1} @@ func TestClampInside(t *testing.T) {`,
    ' \t\tt.Error(d)',
    ' \t}',
    ' }',
    '+',
    ...lines.map((l) => `+${l}`),
    '',
  ].join('\n');

export const ABOVE = appendTest(['func TestClampAbove(t *testing.T) {', '\tif d := cmp.Diff(10, Clamp(15, 0, 10)); d != "" {', '\t\tt.Errorf("Clamp(15, 0, 10) (-want +got):\\n%s", d)', '\t}', '}']);
// Calls Abs, which only the fix adds: at base the package does not build.
export const ABS = appendTest(['func TestAbs(t *testing.T) {', '\tif Abs(-3) != 3 {', '\t\tt.Fatal("Abs(-3)")', '\t}', '}']);

/** The module at base: go.mod, go.sum, the buggy source and its one passing test. */
export const BASE_FILES: Record<string, string> = { 'go.mod': GO_MOD, 'go.sum': GO_SUM, 'clampx.go': BUGGY, 'clampx_test.go': OLD_TEST };
