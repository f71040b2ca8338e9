/** The middle value (the upper of the two middles for an even count) of samples; pure. */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/**
 * The standard error of the median of `samples`: 1.253 σ ÷ √n, σ from their interquartile range (one
 * sample slowed by another VM moves it less than a standard deviation); Infinity under 4. Pure.
 */
export function medianStandardError(samples: readonly number[]): number {
  const n = samples.length;
  if (n < 4) return Infinity;
  const q = [...samples].sort((a, b) => a - b);
  const at = (f: number) => {
    const x = f * (n - 1);
    const lo = Math.floor(x);
    return q[lo] + (q[Math.min(lo + 1, n - 1)] - q[lo]) * (x - lo);
  };
  return (1.253 * ((at(0.75) - at(0.25)) / 1.349)) / Math.sqrt(n);
}
