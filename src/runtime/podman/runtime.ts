import { isolateSubnet, unisolateSubnet } from "./isolation.js";
import { withHostLock } from "./host-lock.js";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tcpAnswers } from "../../net/tcp.js";
import {
  RuntimeError,
  type ContainerInfo,
  type ContainerSpec,
  type ContainerCounters,
  type ContainerStats,
  type ExecResult,
  type RuntimeProvider,
} from "../provider.js";
import { isImageMissing, isNameInUse, isNoSuchContainer, isNoSuchNetwork, lastError, PodmanCli } from "./cli.js";
import { boundedExec } from "./exec.js";
import { detectGpus, gpuArgs, type HostGpus } from "./gpu.js";
import { ImagePuller } from "./images.js";
import { containerInfo, mergeLogs, type PodmanInspect } from "./inspect.js";
import { readLogLines } from "./log-lines.js";
import { checkName, runArgs } from "./spec.js";
import { killAll, ociProcesses } from "./strays.js";
import { parseCounters } from "./stats.js";

/** What `podman ps --format json` says of a container. */
interface PsEntry {
  Id: string;
  Names: string[];
  State: string;
  Labels?: Record<string, string> | null;
  ExitCode?: number;
}

/** A container as `ps` describes it, for one `inspect` cannot read (a removal cut half-way). */
const psInfo = (c: PsEntry): ContainerInfo => ({
  name: c.Names[0]!,
  id: c.Id,
  status: c.State === "removing" ? "removing" : c.State === "running" ? "running" : "unknown",
  address: null,
  networkAddress: null,
  exitCode: null,
  startedAt: null,
  finishedAt: null,
  labels: { ...(c.Labels ?? {}) },
});

export const INSTALL_HINT =
  "install with: apt-get install podman runc netavark aardvark-dns catatonit buildah busybox-static, and run the platform as root (rootful podman)";

/** where Debian's podman finds catatonit for --init */
const INIT_PATHS = ["/usr/libexec/podman/catatonit", "/usr/bin/catatonit"];

export interface PodmanOptions {
  /** the podman binary (PODMAN_BIN); default "podman" from PATH */
  bin?: string;
  /** OCI runtime; runc (crun refuses cgroup v1/hybrid hosts) */
  ociRuntime?: string;
}

/**
 * The local runtime: rootful podman on this host, driven through its CLI (no shell). Containers are
 * started detached under conmon, so they outlive the platform's process; their labels let a restarted
 * platform find them again. See src/runtime/README.md for the choices.
 */
export class PodmanRuntime implements RuntimeProvider {
  readonly name = "local";
  readonly cli: PodmanCli;
  private readonly ociRuntime: string;
  private readonly images: ImagePuller;
  private probe: { result: Promise<string | null>; failedAt: number | null } | null = null;
  private gpus: Promise<HostGpus> | null = null;
  private readonly init = INIT_PATHS.some((p) => existsSync(p));
  /** the previous CPU sample per container, so stats report CPU over the interval since the last call */
  private cpuSamples = new Map<string, { cpuNano: number; systemNano: number }>();
  /** ids of containers this process removed: a conmon or runc of one still alive is a stray (reapStrays) */
  private readonly removedIds = new Set<string>();

  constructor(opts: PodmanOptions = {}) {
    this.ociRuntime = opts.ociRuntime ?? "runc";
    this.cli = new PodmanCli(opts.bin ?? "podman", this.ociRuntime);
    this.images = new ImagePuller(this.cli);
  }

  /** null once podman answered `info` as root with runc (kept for the process's life); a failure is probed again after 30 s. */
  unavailable(): Promise<string | null> {
    const p = this.probe;
    if (p && (p.failedAt === null || Date.now() - p.failedAt < 30_000)) return p.result;
    const entry: { result: Promise<string | null>; failedAt: number | null } = { result: this.check(), failedAt: null };
    void entry.result.then((r) => {
      if (r !== null) entry.failedAt = Date.now();
    });
    this.probe = entry;
    return entry.result;
  }

  private async check(): Promise<string | null> {
    const unavailable = (why: string) =>
      `The container runtime is not available on this host: ${why}; ${INSTALL_HINT}.`;
    try {
      const res = await this.cli.run(["info", "--format", "json"], { timeoutMs: 30_000 });
      if (res.code !== 0) return unavailable(`podman info failed (${lastError(res.stderr)})`);
      const info = JSON.parse(res.stdout) as { host?: { security?: { rootless?: boolean } } };
      if (info.host?.security?.rootless) return unavailable("podman runs rootless here");
      return null;
    } catch (err) {
      return unavailable((err as Error).message);
    }
  }

  /**
   * Under the host's network lock: podman recycles a removed network's subnet, so another platform's removal
   * (network, then its isolation rules) must not interleave with this creation of the same subnet.
   */
  async ensureNetwork(networkName: string): Promise<{ name: string; subnet: string; gateway: string }> {
    checkName(networkName);
    return withHostLock("networks", () => this.ensureNetworkLocked(networkName));
  }

  private async ensureNetworkLocked(networkName: string): Promise<{ name: string; subnet: string; gateway: string }> {
    const found = await this.networkInspect(networkName);
    if (found) {
      await isolateSubnet(found.subnet);
      return found;
    }
    // isolate=true: netavark drops traffic between isolated networks, so one owner's containers never reach another's
    const res = await this.cli.run(["network", "create", "--opt", "isolate=true", networkName]);
    if (res.code !== 0 && !isNameInUse(res.stderr))
      throw new RuntimeError(`creating network ${networkName}: ${lastError(res.stderr)}`);
    const made = await this.networkInspect(networkName);
    if (!made) throw new RuntimeError(`network ${networkName} vanished right after its creation`);
    await isolateSubnet(made.subnet);
    return made;
  }

  private async networkInspect(name: string): Promise<{ name: string; subnet: string; gateway: string } | null> {
    const res = await this.cli.run(["network", "inspect", name]);
    if (res.code !== 0) {
      if (isNoSuchNetwork(res.stderr)) return null;
      throw new RuntimeError(`inspecting network ${name}: ${lastError(res.stderr)}`);
    }
    const [n] = JSON.parse(res.stdout) as { subnets?: { subnet: string; gateway: string }[] }[];
    const s = n?.subnets?.[0];
    if (!s) throw new RuntimeError(`network ${name} has no subnet`);
    return { name, subnet: s.subnet, gateway: s.gateway };
  }

  async removeNetwork(networkName: string): Promise<void> {
    checkName(networkName);
    await withHostLock("networks", () => this.removeNetworkLocked(networkName));
  }

  private async removeNetworkLocked(networkName: string): Promise<void> {
    const found = await this.networkInspect(networkName).catch(() => null);
    const res = await this.cli.run(["network", "rm", networkName]);
    if (res.code !== 0 && !isNoSuchNetwork(res.stderr))
      throw new RuntimeError(`removing network ${networkName}: ${lastError(res.stderr)}`);
    if (found && res.code === 0) await unisolateSubnet(found.subnet);
  }

  async create(spec: ContainerSpec): Promise<ContainerInfo> {
    let devices: string[] = [];
    if (spec.limits.gpu) devices = gpuArgs(spec.limits.gpu, await (this.gpus ??= detectGpus()));
    const { args, env } = runArgs(spec, { init: this.init, devices }); // validates everything before podman runs
    // the platform's registry checks the owner's credentials at every start; other images are pulled when missing
    if (spec.pullAuth) await this.images.ensure(spec.image, spec.pullAuth);
    let res = await this.cli.run(args, { env, timeoutMs: 120_000 });
    if (res.code !== 0 && !spec.pullAuth && isImageMissing(res.stderr)) {
      // podman checks the image before the name: a container of that name may exist all the same
      const existing = await this.inspect(spec.name);
      if (existing) return existing;
      await this.images.ensure(spec.image, null);
      res = await this.cli.run(args, { env, timeoutMs: 120_000 });
    }
    if (res.code !== 0) {
      // a container of that name exists (created earlier, or concurrently): that container is the answer
      if (isNameInUse(res.stderr)) {
        const existing = await this.inspect(spec.name);
        if (existing) return existing;
      }
      // a container created but not started (bad command, runtime error) would block a retry under the same name
      await this.cli.run(["rm", "--force", "--ignore", "--time", "0", spec.name]).catch(() => {});
      throw new RuntimeError(
        `starting ${spec.name}: ${lastError(res.stderr)}`,
        res.code === 127 ? "bad_spec" : "internal",
      );
    }
    const info = await this.inspect(spec.name);
    if (info) return info;
    // an auto-removed container whose program already ended
    return {
      name: spec.name,
      id: res.stdout.trim(),
      status: "exited",
      address: null,
      networkAddress: null,
      exitCode: null,
      startedAt: null,
      finishedAt: null,
      labels: { ...spec.labels },
    };
  }

  async start(name: string): Promise<ContainerInfo> {
    await this.resume(name);
    const info = await this.inspect(name);
    if (!info) throw new RuntimeError(`container ${name} vanished after start`);
    return info;
  }

  /** `podman start` alone: its published host ports are the ones podman chose when it created the container */
  async resume(name: string): Promise<void> {
    checkName(name);
    await this.cli.ok(["start", name], `starting ${name}`);
  }

  async stop(name: string, timeoutSeconds = 10): Promise<void> {
    checkName(name);
    const res = await this.cli.run(
      ["stop", "--ignore", "--time", String(Math.max(0, Math.floor(timeoutSeconds))), name],
      {
        timeoutMs: (timeoutSeconds + 30) * 1000,
      },
    );
    if (res.code !== 0 && !isNoSuchContainer(res.stderr))
      throw new RuntimeError(`stopping ${name}: ${lastError(res.stderr)}`);
  }

  /**
   * `rm --force`; a container left half-removed (state `removing`: a podman cut by a kill) or whose removal hangs
   * has its conmon and runc killed (found by container id in /proc), then goes with a second `rm --force`. Any
   * conmon/runc of the container still alive after it is gone is killed too: nothing of it stays behind.
   */
  async remove(name: string): Promise<void> {
    checkName(name);
    this.cpuSamples.delete(name);
    const before = await this.psByName(name);
    const rm = () => this.cli.run(["rm", "--force", "--ignore", "--time", "2", name], { timeoutMs: 60_000 });
    let res = await rm().catch((err: Error) => ({ code: 1, stdout: "", stderr: err.message }));
    let after = await this.psByName(name);
    if (after && before) {
      killAll((await ociProcesses()).filter((p) => p.containerId === before.id));
      res = await rm().catch((err: Error) => ({ code: 1, stdout: "", stderr: err.message }));
      after = await this.psByName(name);
    }
    if (after) throw new RuntimeError(`removing ${name}: ${lastError(res.stderr) || `still ${after.state}`}`);
    if (before) {
      this.removedIds.add(before.id);
      if (this.removedIds.size > 1000) this.removedIds.delete(this.removedIds.values().next().value!);
      killAll((await ociProcesses()).filter((p) => p.containerId === before.id));
    }
  }

  /** The container of that exact name as `ps` lists it (even one `inspect` cannot read any more), or null. */
  private async psByName(name: string): Promise<{ id: string; state: string } | null> {
    const out = await this.cli.ok(["ps", "--all", "--format", "json", "--filter", `name=^${name}$`], "listing");
    const found = (JSON.parse(out || "[]") as PsEntry[]).find((c) => c.Names?.[0] === name);
    return found ? { id: found.Id, state: found.State } : null;
  }

  /**
   * Kills conmon and runc processes whose container podman no longer has: one this runtime removed, or one
   * whose conmon carries a name `owned` accepts (the caller's containers from before a restart). Processes of
   * other containers are never touched. Returns the ids of the containers whose processes were killed.
   */
  async reapStrays(owned: (name: string) => boolean): Promise<string[]> {
    // /proc first, then podman: a container created in between is not among the processes read
    const procs = await ociProcesses();
    const conmonName = new Map(procs.filter((p) => p.name).map((p) => [p.containerId, p.name!]));
    const candidates = procs.filter((p) => {
      const name = conmonName.get(p.containerId);
      return this.removedIds.has(p.containerId) || (name !== undefined && owned(name));
    });
    if (!candidates.length) return [];
    // `container exists` answers 1 only when podman surely has no such container (an error is not a "no")
    const gone = new Set<string>();
    for (const id of new Set(candidates.map((p) => p.containerId)))
      if ((await this.cli.run(["container", "exists", id]).catch(() => ({ code: -1 }))).code === 1) gone.add(id);
    const strays = candidates.filter((p) => gone.has(p.containerId));
    killAll(strays);
    return [...new Set(strays.map((p) => p.containerId))];
  }

  async inspect(name: string): Promise<ContainerInfo | null> {
    checkName(name);
    const res = await this.cli.run(["container", "inspect", name]);
    if (res.code !== 0) {
      if (isNoSuchContainer(res.stderr)) return null;
      throw new RuntimeError(`inspecting ${name}: ${lastError(res.stderr)}`);
    }
    const [found] = JSON.parse(res.stdout) as PodmanInspect[];
    return found ? containerInfo(found) : null;
  }

  async list(labels: Record<string, string>): Promise<ContainerInfo[]> {
    const filters = Object.entries(labels).flatMap(([k, v]) => ["--filter", `label=${k}=${v}`]);
    const ps = await this.cli.ok(["ps", "--all", "--format", "json", ...filters], "listing containers");
    const listed = (JSON.parse(ps || "[]") as PsEntry[]).filter((c) => c.Names?.[0]);
    if (!listed.length) return [];
    // one inspect for all of them; a container removed in between is simply not in the answer
    const res = await this.cli.run(["container", "inspect", ...listed.map((c) => c.Names[0]!)]);
    if (res.code === 0 && res.stdout.trim()) return (JSON.parse(res.stdout) as PodmanInspect[]).map(containerInfo);
    // one container `inspect` cannot read (half-removed: state `removing`) fails the whole answer: one by one,
    // and those it cannot read are described by `ps` so the caller still sees them and can finish them off
    const out: ContainerInfo[] = [];
    for (const c of listed) {
      const info = await this.inspect(c.Names[0]!).catch(() => null);
      if (info) out.push(info);
      else if (await this.psByName(c.Names[0]!)) out.push(psInfo(c));
    }
    return out;
  }

  async logs(name: string, tail: number): Promise<string[]> {
    checkName(name);
    const n = Math.max(1, Math.min(10_000, Math.floor(tail)));
    const res = await this.cli.run(["logs", "--tail", String(n), "--timestamps", name]);
    if (res.code !== 0) {
      if (isNoSuchContainer(res.stderr)) return [];
      throw new RuntimeError(`logs of ${name}: ${lastError(res.stderr)}`);
    }
    return mergeLogs(res.stdout, res.stderr, n);
  }

  logLines = (name: string, sinceNs: bigint, untilNs: bigint) => readLogLines(this.cli, name, sinceNs, untilNs);

  exec(name: string, command: string[], opts: { timeoutMs: number; maxBytes: number }): Promise<ExecResult> {
    checkName(name);
    return boundedExec(this.cli.bin, this.ociRuntime, name, command, opts);
  }

  async stats(name: string): Promise<ContainerStats | null> {
    checkName(name);
    const res = await this.cli.run(["stats", "--no-stream", "--format", "{{json .ContainerStats}}", name]);
    if (res.code !== 0) return null;
    const s = JSON.parse(res.stdout.trim().split("\n")[0] || "null") as {
      CPU: number;
      CPUNano: number;
      SystemNano: number;
      MemUsage: number;
      MemLimit: number;
      PIDs: number;
    } | null;
    if (!s || !s.SystemNano) return null; // not running
    const prev = this.cpuSamples.get(name);
    this.cpuSamples.set(name, { cpuNano: s.CPUNano, systemNano: s.SystemNano });
    // podman's own figure without a previous sample is the average since the container started
    const cpuPercent =
      prev && s.SystemNano > prev.systemNano && s.CPUNano >= prev.cpuNano
        ? ((s.CPUNano - prev.cpuNano) / (s.SystemNano - prev.systemNano)) * 100
        : s.CPU;
    return { cpuPercent, memoryBytes: s.MemUsage, memoryLimitBytes: s.MemLimit, pids: s.PIDs };
  }

  async statsMany(names: string[]): Promise<Map<string, ContainerCounters>> {
    names.forEach(checkName);
    if (!names.length) return new Map();
    const res = await this.cli.run(["stats", "--no-stream", "--format", "{{json .ContainerStats}}", ...names]);
    // one name gone meanwhile fails the whole call: the caller samples again next minute
    return res.code === 0 ? parseCounters(res.stdout) : new Map();
  }

  /** established connections to the port, read from the container's network namespace (/proc/<pid>/net/tcp*) */
  async connections(name: string, port: number): Promise<number | null> {
    checkName(name);
    const res = await this.cli.run(["container", "inspect", "--format", "{{.State.Pid}}", name]);
    const pid = Number(res.stdout.trim());
    if (res.code !== 0 || !pid) return res.code === 0 ? 0 : null;
    const hexPort = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
    let count = 0;
    for (const file of ["tcp", "tcp6"]) {
      const text = await readFile(`/proc/${pid}/net/${file}`, "utf8").catch(() => null);
      if (text === null) return file === "tcp" ? null : count;
      for (const line of text.split("\n").slice(1)) {
        const [, local, , st] = line.trim().split(/\s+/);
        if (local?.endsWith(hexPort) && st === "01") count++; // 01: ESTABLISHED
      }
    }
    return count;
  }

  async health(name: string): Promise<boolean> {
    const info = await this.inspect(name);
    if (!info || info.status !== "running") return false;
    if (!info.address) return true;
    return tcpAnswers(info.address, 1000);
  }
}
