/** How ΔC reads in a sentence: the CLI's line and the App's check/comment say it the same way. Pure. */
import type { ChangeCoverage } from './measure.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function describeCoverage(c: Pick<ChangeCoverage, 'dC' | 'referenceDC' | 'covered' | 'lines'>): string {
  if (c.dC === null) return 'change coverage: no executable changed line (left out of ΔC)';
  const ref = c.referenceDC === null ? '' : `; the reference tests ${pct(c.referenceDC)}`;
  return `change coverage ΔC ${pct(c.dC)}: the tests run ${c.covered} of ${c.lines} executable changed lines more often${ref}`;
}
