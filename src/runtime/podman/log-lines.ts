import { RuntimeError, type LogLine } from "../provider.js";
import { isNoSuchContainer, lastError, type PodmanCli } from "./cli.js";
import { checkName } from "./spec.js";

/** A `podman logs --timestamps` time as ns since the epoch; null for what is no such time. */
export function timeNs(ts: string): bigint | null {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return null;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0").slice(0, 9));
}

/** ns since the epoch as RFC 3339 with nanoseconds (UTC), as `podman logs --since/--until` take it. */
export function rfc3339Nano(ns: bigint): string {
  const iso = new Date(Number(ns / 1_000_000n)).toISOString().slice(0, 19);
  return `${iso}.${String(ns % 1_000_000_000n).padStart(9, "0")}Z`;
}

/** `podman logs --timestamps` stdout and stderr as timed lines in (sinceNs, untilNs], in time order (stdout first on a tie). */
export function timedLines(stdout: string, stderr: string, sinceNs: bigint, untilNs: bigint): LogLine[] {
  const lines: LogLine[] = [];
  for (const [stream, text] of [
    ["stdout", stdout],
    ["stderr", stderr],
  ] as const) {
    for (const line of text.split("\n")) {
      const space = line.indexOf(" ");
      if (space < 0) continue;
      const ns = timeNs(line.slice(0, space));
      if (ns === null || ns <= sinceNs || ns > untilNs) continue; // podman's own warnings carry no time
      lines.push({ ns, stream, text: line.slice(space + 1) });
    }
  }
  // a stable sort: each stream keeps its own order
  return lines.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
}

/** RuntimeProvider.logLines for podman: a container's lines in (sinceNs, untilNs] with their times. */
export async function readLogLines(cli: PodmanCli, name: string, sinceNs: bigint, untilNs: bigint): Promise<LogLine[]> {
  checkName(name);
  // --since is exclusive; --until is given a nanosecond more, and the lines are cut to (since, until] here anyway
  const args = ["logs", "--timestamps", "--since", rfc3339Nano(sinceNs), "--until", rfc3339Nano(untilNs + 1n), name];
  const res = await cli.run(args, { timeoutMs: 60_000 });
  if (res.code !== 0) {
    if (isNoSuchContainer(res.stderr)) return [];
    throw new RuntimeError(`logs of ${name}: ${lastError(res.stderr)}`);
  }
  return timedLines(res.stdout, res.stderr, sinceNs, untilNs);
}
