/** The middle value (the upper of the two middles for an even count) of samples; pure. */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
