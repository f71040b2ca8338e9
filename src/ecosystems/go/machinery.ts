/** Go's dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import { partChanged } from '../machinery.js';
import type { PathInfo, TestMachinery } from '../types.js';

export const goDependencyManifest = (p: PathInfo): boolean => p.base === 'go.mod' || p.base === 'go.sum';

/**
 * A test package's `TestMain` and `init` functions run before any test and may rewrite what
 * `go test -json` prints (swap os.Stdout, exit 0): their bodies, from `func` to the closing brace
 * at the start of a line.
 */
const setUp = (text: string): string[] => [...text.matchAll(/^func\s+(TestMain|init)\s*\([^]*?^\}/gm)].map((m) => m[0]);

export const goMachinery: TestMachinery = {
  reads: (changed) => changed.filter((f) => f.endsWith('_test.go')),
  changes(p, texts) {
    // Vendored modules are what the tests' helpers (testify, go-cmp) run as.
    if (p.dirs[0] === 'vendor') return true;
    return p.base.endsWith('_test.go') && partChanged(p.path, texts, setUp);
  },
};
