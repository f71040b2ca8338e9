/**
 * Go's own line counters: `go test` with `-covermode=count -coverprofile`, given through GOFLAGS so
 * the test command stays as the harness built it, then the profile turned into per-line counts.
 * Pure.
 */

/** `./dir` for each directory of the target files (`.` for the root): what -coverpkg counts. */
export function coverPackages(targets: readonly string[]): string[] {
  const dirs = targets.map((f) => (f.includes('/') ? f.slice(0, f.lastIndexOf('/')) : ''));
  return [...new Set(dirs)].map((d) => (d ? `./${d}` : '.'));
}

/**
 * Per-line counts of the target files from a count-mode cover profile
 * (`<import path>/<file>:<line>.<col>,<line>.<col> <statements> <count>`). A file is matched to a
 * target by its path's end; a line takes the largest count of the blocks that cover it.
 */
export function parseGoCoverProfile(profile: string, targets: readonly string[]): Record<string, Record<number, number>> {
  const out: Record<string, Record<number, number>> = {};
  const byName = new Map<string, string | undefined>();
  const targetOf = (name: string): string | undefined => {
    if (!byName.has(name)) byName.set(name, [...targets].sort((a, b) => b.length - a.length).find((t) => name === t || name.endsWith(`/${t}`)));
    return byName.get(name);
  };
  for (const line of profile.split('\n')) {
    const m = /^(.+):(\d+)\.\d+,(\d+)\.\d+ \d+ (\d+)$/.exec(line.trim());
    if (!m) continue;
    const target = targetOf(m[1]!);
    if (!target) continue;
    const counts = (out[target] ??= {});
    const count = Number(m[4]);
    for (let l = Number(m[2]); l <= Number(m[3]); l++) counts[l] = Math.max(counts[l] ?? 0, count);
  }
  // Only executed lines carry a count (absent = never executed), as the other counters give them.
  for (const counts of Object.values(out)) for (const [l, c] of Object.entries(counts)) if (c === 0) delete counts[Number(l)];
  return out;
}
