/** Which PHP release a composer `php` constraint allows, highest first. Pure. */

/** PHP releases with an official `php:<x.y>-cli` image, oldest first. */
export const PHP_RELEASES = ['5.6', '7.0', '7.1', '7.2', '7.3', '7.4', '8.0', '8.1', '8.2', '8.3', '8.4'] as const;

type V = [number, number, number];

function parse(v: string): { v: V; parts: number; wildcard: boolean } | undefined {
  const m = /^v?(\d+)(?:\.(\d+|\*|x))?(?:\.(\d+|\*|x))?/i.exec(v.trim());
  if (!m) return undefined;
  const nums = [m[1], m[2], m[3]].filter((x) => x !== undefined);
  const wildcard = nums.some((x) => /[*x]/i.test(x!));
  const concrete = nums.filter((x) => /^\d+$/.test(x!)).map(Number);
  return { v: [concrete[0] ?? 0, concrete[1] ?? 0, concrete[2] ?? 0], parts: concrete.length, wildcard };
}

function cmp(a: V, b: V): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** One term (`^7.2`, `>=8.1`, `~8.1.0`, `8.2.*`, `8.2`) against a release x.y (as x.y.99, its latest patch). */
function termAllows(term: string, release: V): boolean {
  const m = /^(\^|~|>=|<=|>|<|!=|==|=)?\s*(.+)$/.exec(term.trim());
  if (!m) return false;
  const op = m[1] ?? '';
  const p = parse(m[2]!);
  if (!p) return false;
  const [maj, min] = p.v;
  const rel: V = [release[0], release[1], 99];
  const relLow: V = [release[0], release[1], 0];
  switch (op) {
    case '^':
      return release[0] === maj && cmp(rel, p.v) >= 0;
    case '~':
      return p.parts >= 3 ? release[0] === maj && release[1] === min && cmp(rel, p.v) >= 0 : release[0] === maj && cmp(rel, p.v) >= 0;
    case '>=':
      return cmp(rel, p.v) >= 0;
    case '>':
      return cmp(rel, p.v) > 0;
    case '<=':
      return cmp(relLow, p.v) <= 0;
    case '<':
      return cmp(relLow, p.v) < 0;
    case '!=':
      return true;
    default:
      // Exact or wildcard: `8.2`, `8.2.*`, `8.*`, `8.2.3`.
      return p.parts <= 1 ? release[0] === maj : release[0] === maj && release[1] === min;
  }
}

/** `^7.2 || ^8.0`, `>=7.4 <8.3`, `>=7.1,<8.0`, `7.4.*|8.*`: OR of ANDs. */
export function constraintAllows(constraint: string, release: string): boolean {
  const r = parse(release);
  if (!r) return false;
  return constraint.split(/\s*\|\|?\s*/).some((alt) => {
    const terms = alt.trim().replace(/\s*,\s*/g, ' ').replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return terms.length > 0 && terms.every((t) => termAllows(t, r.v));
  });
}

/** The highest release the constraint allows, or undefined. */
export function newestAllowedPhp(constraint: string): string | undefined {
  return [...PHP_RELEASES].reverse().find((r) => constraintAllows(constraint, r));
}
