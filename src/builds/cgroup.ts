import { existsSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * A control group per build, for the limits chroot isolation does not give (buildah's --memory and --cpu-*
 * need OCI isolation): memory (no swap), CPU quota and a process count, over every process of the build.
 * Made like podman's cgroupfs manager makes its containers' groups: under `platform-builds/` at the root of
 * the unified hierarchy (cgroup v2), or of the memory, cpu and pids hierarchies (v1). Where they cannot be
 * made (no permission, controllers not available) the build runs without, and `problem` says why.
 */

const ROOT = "/sys/fs/cgroup";
const PARENT = "platform-builds";
const PERIOD_US = 100_000;

export interface Limits {
  memoryMb: number;
  cpus: number;
  pids: number;
}

export interface BuildCgroup {
  /** the cgroup.procs files a step's first process writes itself into */
  procs: string[];
  /** memory peak or failcount facts for the log, when the kernel keeps them */
  oomKilled(): Promise<boolean>;
  remove(): Promise<void>;
}

const write = (file: string, value: string) => writeFile(file, value);

async function makeV2(id: string, limits: Limits): Promise<BuildCgroup> {
  const parent = path.join(ROOT, PARENT);
  const available = (await readFile(path.join(ROOT, "cgroup.controllers"), "utf8")).split(/\s+/);
  for (const c of ["memory", "cpu", "pids"])
    if (!available.includes(c)) throw new Error(`the ${c} controller is not available in ${ROOT}`);
  await write(path.join(ROOT, "cgroup.subtree_control"), "+memory +cpu +pids");
  await mkdir(parent, { recursive: true });
  await write(path.join(parent, "cgroup.subtree_control"), "+memory +cpu +pids");
  const dir = path.join(parent, id);
  await mkdir(dir, { recursive: true });
  const bytes = String(limits.memoryMb * 1024 * 1024);
  await write(path.join(dir, "memory.max"), bytes);
  if (existsSync(path.join(dir, "memory.swap.max"))) await write(path.join(dir, "memory.swap.max"), "0");
  await write(path.join(dir, "cpu.max"), `${Math.round(limits.cpus * PERIOD_US)} ${PERIOD_US}`);
  await write(path.join(dir, "pids.max"), String(limits.pids));
  return {
    procs: [path.join(dir, "cgroup.procs")],
    oomKilled: async () => {
      const events = await readFile(path.join(dir, "memory.events"), "utf8").catch(() => "");
      return /^oom_kill [1-9]/m.test(events);
    },
    remove: () => removeDirs([dir]),
  };
}

async function makeV1(id: string, limits: Limits): Promise<BuildCgroup> {
  const dirs = {
    memory: path.join(ROOT, "memory", PARENT, id),
    cpu: path.join(ROOT, "cpu", PARENT, id),
    pids: path.join(ROOT, "pids", PARENT, id),
  };
  for (const [c, dir] of Object.entries(dirs)) {
    if (!existsSync(path.join(ROOT, c, "cgroup.procs"))) throw new Error(`no ${c} hierarchy at ${ROOT}/${c}`);
    await mkdir(dir, { recursive: true });
  }
  const bytes = String(limits.memoryMb * 1024 * 1024);
  await write(path.join(dirs.memory, "memory.limit_in_bytes"), bytes);
  const memsw = path.join(dirs.memory, "memory.memsw.limit_in_bytes");
  if (existsSync(memsw)) await write(memsw, bytes);
  await write(path.join(dirs.cpu, "cpu.cfs_period_us"), String(PERIOD_US));
  await write(path.join(dirs.cpu, "cpu.cfs_quota_us"), String(Math.round(limits.cpus * PERIOD_US)));
  await write(path.join(dirs.pids, "pids.max"), String(limits.pids));
  return {
    procs: Object.values(dirs).map((d) => path.join(d, "cgroup.procs")),
    oomKilled: async () => {
      const control = await readFile(path.join(dirs.memory, "memory.oom_control"), "utf8").catch(() => "");
      return /^oom_kill [1-9]/m.test(control);
    },
    remove: () => removeDirs(Object.values(dirs)),
  };
}

/** Removes the groups once their processes are gone (a killed step's processes take a moment to exit). */
async function removeDirs(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (let i = 0; i < 50 && existsSync(dir); i++) {
      try {
        await rmdir(dir);
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

/** The groups of a build a dead platform left behind (their processes killed), if any. */
export async function removeLeftoverCgroup(id: string): Promise<void> {
  const dirs = [path.join(ROOT, PARENT, id), ...["memory", "cpu", "pids"].map((c) => path.join(ROOT, c, PARENT, id))];
  await removeDirs(dirs.filter((d) => existsSync(d)));
}

/** The build's control group, or the reason there is none. */
export async function makeCgroup(id: string, limits: Limits): Promise<BuildCgroup | { problem: string }> {
  try {
    const v2 = existsSync(path.join(ROOT, "cgroup.controllers"));
    return await (v2 ? makeV2 : makeV1)(id, limits);
  } catch (err) {
    await removeLeftoverCgroup(id).catch(() => {});
    return { problem: `no control group for builds (${(err as Error).message}); only rlimits and the timeout apply` };
  }
}
