/**
 * Response times as counts per fixed log-scale bucket (migration 021): bucket 0 is under 1 ms, bucket i >= 1 is
 * [2^((i-1)/4), 2^(i/4)) ms, each about 19 % wider than the last; the last bucket (from about 12 minutes) is
 * open-ended. Fixed buckets add element-wise, so histograms of any number of edge processes, flushes, days or
 * apps merge exactly, and a percentile read from the sum is as good as one read from every request (to a bucket).
 */
export const BUCKETS = 80;
const STEPS_PER_DOUBLING = 4;

/** The bucket a response time falls in. */
export function bucketOf(ms: number): number {
  if (!(ms >= 1)) return 0; // under 1 ms, and NaN
  return Math.min(BUCKETS - 1, 1 + Math.floor(STEPS_PER_DOUBLING * Math.log2(ms)));
}

/** Lower and upper bound (ms) of a bucket; the last bucket's upper bound is its lower one (open-ended). */
export function bucketBounds(i: number): [number, number] {
  if (i <= 0) return [0, 1];
  const lower = 2 ** ((i - 1) / STEPS_PER_DOUBLING);
  return [lower, i >= BUCKETS - 1 ? lower : 2 ** (i / STEPS_PER_DOUBLING)];
}

export const emptyHistogram = (): number[] => new Array<number>(BUCKETS).fill(0);

/** Adds b into a element-wise (a grows when b is longer: a histogram of a future, finer layout). */
export function addInto(a: number[], b: readonly number[]): number[] {
  for (let i = 0; i < b.length; i++) a[i] = (a[i] ?? 0) + (b[i] ?? 0);
  return a;
}

/**
 * The p-quantile (0 < p <= 1) in ms, one decimal: the bucket holding the request of rank ceil(p·n), interpolated
 * linearly by rank inside it. null for an empty histogram (no requests: no response time to speak of).
 */
export function percentile(hist: readonly number[], p: number): number | null {
  const n = hist.reduce((s, c) => s + c, 0);
  if (n <= 0) return null;
  const rank = Math.max(1, Math.ceil(p * n));
  let before = 0;
  for (let i = 0; i < hist.length; i++) {
    const c = hist[i];
    if (c > 0 && before + c >= rank) {
      const [lower, upper] = bucketBounds(i);
      const value = lower + ((upper - lower) * (rank - before)) / c;
      return Math.round(value * 10) / 10;
    }
    before += c;
  }
  return null; // not reached: ranks never exceed n
}
