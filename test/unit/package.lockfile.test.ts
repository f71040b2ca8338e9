/**
 * The committed lockfile installs with `npm ci` on every platform: every optional dependency a
 * locked package declares (the per-platform native binaries of msgpackr-extract, unrs-resolver, …)
 * is locked too. npm writes a lockfile without them when it resolves on one platform only, and
 * then `npm ci` refuses it elsewhere ("Missing: … from lock file").
 */
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

interface LockEntry {
  version?: string;
  optionalDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
  link?: boolean;
}

const lock = JSON.parse(readFileSync(join(process.cwd(), 'package-lock.json'), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
};
const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as Record<string, Record<string, string>>;

/** Where node's resolution finds `dep` from the package at `from`: its own node_modules, then each ancestor's. */
function resolveLocked(from: string, dep: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir ? `${dir}/node_modules/${dep}` : `node_modules/${dep}`;
    if (candidate in lock.packages) return candidate;
    if (!dir) return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up === -1 ? '' : dir.slice(0, up);
  }
}

describe('package-lock.json', () => {
  it('is a v3 lockfile in step with package.json', () => {
    expect(lock.lockfileVersion).toBe(3);
    const root = lock.packages[''] as LockEntry & { devDependencies?: Record<string, string> };
    expect(root.dependencies).toEqual(pkg.dependencies);
    expect(root.devDependencies).toEqual(pkg.devDependencies);
  });

  it("locks every platform's optional packages, so npm ci installs it unchanged anywhere", () => {
    const missing: string[] = [];
    let optional = 0;
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
        optional++;
        if (!resolveLocked(path, dep)) missing.push(`${path || '(root)'} -> ${dep}`);
      }
    }
    // The tree has platform binaries (darwin, win32, linux-arm…) beside linux-x64 ones.
    expect(optional).toBeGreaterThan(20);
    expect(Object.keys(lock.packages).some((p) => posix.basename(p).includes('darwin'))).toBe(true);
    expect(Object.keys(lock.packages).some((p) => posix.basename(p).includes('win32'))).toBe(true);
    expect(missing).toEqual([]);
  });
});
