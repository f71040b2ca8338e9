import { median, medianStandardError } from '../../bench/stats.js';

describe('bench statistics', () => {
  it('median takes the upper middle of an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(3);
  });

  it("the median's standard error shrinks with the count and grows with the spread", () => {
    const narrow = [0.98, 0.99, 1, 1.01, 1.02, 1, 0.99, 1.01];
    const wide = narrow.map((x) => 1 + (x - 1) * 10);
    expect(medianStandardError(wide)).toBeCloseTo(medianStandardError(narrow) * 10, 10);
    expect(medianStandardError([...narrow, ...narrow, ...narrow, ...narrow])).toBeLessThan(medianStandardError(narrow));
    // Quartiles 0.99 and 1.01 of the eight (interpolated): σ ≈ 0.02 ÷ 1.349, SE = 1.253 σ ÷ √8.
    expect(medianStandardError(narrow)).toBeCloseTo((1.253 * (0.02 / 1.349)) / Math.sqrt(8), 6);
  });

  it('one far outlier barely moves it (the interquartile range, not the deviation)', () => {
    const pairs = [1.02, 0.97, 1.05, 1.01, 0.99, 1.04, 1.0, 1.03, 0.98, 1.02, 1.01];
    const withOutlier = [...pairs.slice(0, -1), 1.9];
    expect(Math.abs(medianStandardError(withOutlier) - medianStandardError(pairs))).toBeLessThan(0.005);
  });

  it('under four samples it says nothing is known', () => {
    expect(medianStandardError([1, 1.1, 0.9])).toBe(Infinity);
  });
});
