/**
 * CPU time of the processes under test, from /proc (Linux only; elsewhere every reading is null and
 * the benchmark prints no CPU figures). Tells where the cores went during a run: the API server's
 * event loop, or the PostgreSQL backends answering its queries.
 */
import { readFileSync, readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";

const CLK_TCK = (() => {
  const r = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** [ppid, utime+stime in ticks] of one process, or null if it is gone. */
function stat(pid: number): [number, number] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return [Number(fields[1]), Number(fields[11]) + Number(fields[12])];
  } catch {
    return null;
  }
}

/** CPU seconds used so far by pid and its direct children (a postmaster and its backends). */
function seconds(pid: number, withChildren: boolean): number | null {
  const own = stat(pid);
  if (!own) return null;
  let ticks = own[1];
  if (withChildren) {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const s = stat(Number(entry));
      if (s && s[0] === pid) ticks += s[1];
    }
  }
  return ticks / CLK_TCK;
}

/** The embedded PostgreSQL's postmaster under a platform DATA_DIR (layout of src/store/embedded.ts). */
export function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(path.join(dataDir, "control", "pgdata", "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export interface CpuProbe {
  /** CPU seconds so far per named group, null where unknown */
  read(): Record<string, number | null>;
}

export function cpuProbe(groups: Record<string, { pid: number | null | undefined; withChildren?: boolean }>): CpuProbe {
  return {
    read() {
      const out: Record<string, number | null> = {};
      for (const [name, g] of Object.entries(groups)) out[name] = g.pid ? seconds(g.pid, g.withChildren ?? false) : null;
      return out;
    },
  };
}
