import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * How long each test file took in a recent full run (seconds, start-up included), longest first: test/run.ts starts
 * the longest files first, so a one-minute file never starts last and holds the run's end alone. Refresh it after a
 * full run with `TEST_SAVE_DURATIONS=1 npm test`; a file missing from it counts as its folder's median.
 */
export const DURATIONS_FILE = path.join("test", "file-seconds.tsv");

function readDurations(file = DURATIONS_FILE): Map<string, number> {
  if (!existsSync(file)) return new Map();
  return new Map(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => {
        const [seconds, name] = line.split("\t");
        return [name!, Number(seconds)] as const;
      })
      .filter(([, s]) => Number.isFinite(s)),
  );
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};

/** The files longest first (by the recorded durations; ties and unknown folders by name). */
export function longestFirst(files: string[]): string[] {
  const known = readDurations();
  const byDir = new Map<string, number[]>();
  for (const [name, s] of known) byDir.set(path.dirname(name), [...(byDir.get(path.dirname(name)) ?? []), s]);
  const overall = median([...known.values()]);
  const estimate = (f: string) => known.get(f) ?? median(byDir.get(path.dirname(f)) ?? [overall]);
  return [...files].sort((a, b) => estimate(b) - estimate(a) || a.localeCompare(b));
}

/** Merges a run's timings (test/helpers/slowest-files.mjs: `ms<TAB>absolute path` lines) into DURATIONS_FILE. */
export function saveDurations(timingsFile: string): void {
  if (!existsSync(timingsFile)) return;
  const all = readDurations();
  for (const line of readFileSync(timingsFile, "utf8").split("\n")) {
    const [ms, name] = line.split("\t");
    if (name && Number(ms) > 0) all.set(path.relative(".", name), Number(ms) / 1000);
  }
  const rows = [...all]
    .filter(([name]) => existsSync(name))
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, s]) => `${s.toFixed(1)}\t${name}\n`);
  writeFileSync(DURATIONS_FILE, rows.join(""));
}
