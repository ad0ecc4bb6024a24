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

/** ppid, own utime+stime, and utime+stime of its reaped children, in ticks; null if it is gone. */
function stat(pid: number): { ppid: number; own: number; reaped: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" "); // f[0] is field 3 (state)
    return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

/**
 * CPU seconds used so far by pid and, withChildren, by its direct children, live or exited (a
 * postmaster and its backends; a pool closing idle connections ends backends during a run).
 */
function seconds(pid: number, withChildren: boolean): number | null {
  const root = stat(pid);
  if (!root) return null;
  let ticks = root.own;
  if (withChildren) {
    ticks += root.reaped;
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const s = stat(Number(entry));
      if (s && s.ppid === pid) ticks += s.own + s.reaped;
    }
  }
  return ticks / CLK_TCK;
}

/** CPU seconds the whole machine spent busy so far (all cores: user, nice, system, irq, softirq, steal). */
function machineBusySeconds(): number | null {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8")
      .split("\n")[0]
      .trim()
      .split(/\s+/)
      .map(Number);
    return (user + nice + system + irq + softirq + steal) / CLK_TCK;
  } catch {
    return null;
  }
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

/**
 * The named process groups, plus "elsewhere": the machine's busy time not used by any of them (other
 * work on the machine, and kernel time such as loopback networking not charged to a process). A large
 * "elsewhere" during a run means the figures were taken on a shared, noisy machine.
 */
export function cpuProbe(groups: Record<string, { pid: number | null | undefined; withChildren?: boolean }>): CpuProbe {
  return {
    read() {
      const out: Record<string, number | null> = {};
      let sum = 0;
      for (const [name, g] of Object.entries(groups)) {
        out[name] = g.pid ? seconds(g.pid, g.withChildren ?? false) : null;
        sum += out[name] ?? 0;
      }
      const busy = machineBusySeconds();
      out.elsewhere = busy === null ? null : busy - sum;
      return out;
    },
  };
}

/** The direct child of pid whose environment holds `entry` (e.g. the edge `npm start` forks: ROLES=edge), or null. */
export function childWithEnv(pid: number, entry: string): number | null {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || stat(Number(name))?.ppid !== pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(entry)) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}
