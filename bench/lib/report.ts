/** Figures and the results table of bench/db.ts. */

/** The p-th percentile (nearest rank). */
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
export const ms = (v: number) => `${Math.round(v)} ms`;
export const secs = (v: number) => `${(v / 1000).toFixed(1)} s`;
export const mbps = (bytes: number, t: number) => `${(bytes / 2 ** 20 / (t / 1000)).toFixed(0)} MB/s`;

/** Prints rows under a header, each column padded to its widest cell. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (c ?? "").padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const r of rows) console.log(line(r));
}
