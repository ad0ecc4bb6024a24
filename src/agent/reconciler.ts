import type { ContainerInfo, RuntimeProvider } from "../runtime/provider.js";
import { LABEL_GENERATION, LABEL_HOST, LABEL_POD, type DesiredPod, type PodReport } from "./protocol.js";

/**
 * The agent's reconciler: the apps area's reconciler (src/apps/reconciler.ts) drives containers to pod rows in the
 * store, which an external host must not read; this one drives them to the desired state the control plane sent,
 * with the same runtime provider and the same rules: a generation's container is found by its labels (so a
 * restarted agent adopts what runs instead of starting a duplicate), a new generation serves once it answers its
 * health check and the older one goes after the control plane was told, a crash restarts with back-off and after
 * `maxCrashes` in a row the pod is failed. Nothing here waits long: a pass checks each pod once and the next pass
 * (every second or so, and at every change) carries on.
 */
export interface AgentReconcilerOptions {
  runtime: RuntimeProvider;
  hostId: string;
  /** prefixed to every container name (tests use a unique one; adoption goes by labels) */
  namePrefix: string;
  /** the address the edge reaches this machine at, in place of the published 127.0.0.1 */
  advertiseHost: string;
  maxCrashes: number;
  /** how long an older generation keeps serving after the new one was reported serving */
  drainMs: number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
}

interface Crashes {
  generation: number;
  count: number;
  nextAt: number;
  reason: string;
}

const generationOf = (c: ContainerInfo) => Number(c.labels[LABEL_GENERATION] ?? 0);
/** how long a pass waits for a container it just created to answer, before moving on to the next pod */
const FRESH_WAIT_MS = 2000;
const backoffMs = (crashes: number) => Math.min(60, 2 ** (crashes - 1)) * 1000;

export class AgentReconciler {
  private desired: DesiredPod[] | null = null;
  private readonly crashes = new Map<string, Crashes>();
  private readonly restarts = new Map<string, number>();
  /** pod → generation and when its serving was first reported to the control plane */
  private readonly servingSince = new Map<string, { generation: number; at: number }>();
  private readonly networks = new Set<string>();
  last: { pods: PodReport[]; containers: number } = { pods: [], containers: 0 };

  constructor(private readonly o: AgentReconcilerOptions) {}

  /** every container of this host (its host was deleted; the control plane refused the credential) */
  async removeAll(): Promise<void> {
    for (const c of await this.o.runtime.list({ [LABEL_HOST]: this.o.hostId }))
      await this.removeContainer(c.name, "host deleted");
  }

  /** the control plane's desired state; until the first one arrives nothing is created or removed */
  setDesired(pods: DesiredPod[]): void {
    this.desired = pods;
  }

  /** the report last computed was delivered: older generations may now drain */
  delivered(reports: PodReport[]): void {
    const now = Date.now();
    for (const r of reports) {
      const seen = this.servingSince.get(r.pod_id);
      if (r.state === "running" && r.serving_generation === r.generation && seen?.generation !== r.generation)
        this.servingSince.set(r.pod_id, { generation: r.generation, at: now });
    }
  }

  /** One pass over every pod and container of this host; returns (and keeps) the report. */
  async pass(): Promise<{ pods: PodReport[]; containers: number }> {
    const containers = await this.o.runtime.list({ [LABEL_HOST]: this.o.hostId });
    const desired = this.desired;
    if (!desired) return (this.last = { pods: [], containers: containers.length });
    const byPod = new Map<string, ContainerInfo[]>();
    for (const c of containers) {
      const id = c.labels[LABEL_POD];
      if (id) byPod.set(id, [...(byPod.get(id) ?? []), c]);
    }
    const known = new Set(desired.map((p) => p.pod_id));
    for (const [id, cs] of byPod)
      if (!known.has(id)) for (const c of cs) await this.removeContainer(c.name, `orphan of pod ${id}`);
    const pods: PodReport[] = [];
    for (const pod of desired) {
      try {
        pods.push(await this.reconcile(pod, byPod.get(pod.pod_id) ?? []));
      } catch (err) {
        this.o.log("pod reconcile failed; the next pass retries", { pod: pod.pod_id, err: String(err) });
      }
    }
    return (this.last = { pods, containers: containers.length });
  }

  private report(pod: DesiredPod, r: Pick<PodReport, "state" | "reason"> & Partial<PodReport>): PodReport {
    return {
      pod_id: pod.pod_id,
      generation: pod.generation,
      desired_state: pod.desired_state,
      address: null,
      serving_generation: null,
      restart_count: this.restarts.get(pod.pod_id) ?? 0,
      ...r,
    };
  }

  private async reconcile(pod: DesiredPod, cs: ContainerInfo[]): Promise<PodReport> {
    if (pod.desired_state !== "running" || !pod.spec) {
      for (const c of cs) await this.removeContainer(c.name, `pod ${pod.desired_state}`);
      this.crashes.delete(pod.pod_id);
      return this.report(pod, { state: pod.desired_state === "removed" ? "removed" : "stopped", reason: null });
    }
    const gen = pod.generation;
    let current = cs.find((c) => generationOf(c) === gen) ?? null;
    const older = cs.filter((c) => generationOf(c) !== gen);
    const serving = older.filter((c) => c.status === "running").sort((a, b) => generationOf(b) - generationOf(a))[0];
    const fallback = (state: "creating" | "failed", reason: string) =>
      serving
        ? this.report(pod, {
            state: "running",
            reason,
            address: this.advertise(serving.address),
            serving_generation: generationOf(serving),
          })
        : this.report(pod, { state, reason });

    let crash = this.crashes.get(pod.pod_id);
    if (crash && crash.generation !== gen) {
      this.crashes.delete(pod.pod_id); // a new generation starts with a clean slate
      crash = undefined;
    }
    if (current && current.status !== "running") {
      crash = await this.crashed(pod, current);
      current = null;
    }
    const fresh = !current;
    if (!current) {
      if (crash && crash.count >= this.o.maxCrashes) return fallback("failed", `${crash.reason}; not restarted again`);
      if (crash && crash.nextAt > Date.now()) return fallback("creating", `${crash.reason}; restarting`);
      try {
        if (pod.spec.network && !this.networks.has(pod.spec.network)) {
          await this.o.runtime.ensureNetwork(pod.spec.network);
          this.networks.add(pod.spec.network);
        }
        current = await this.o.runtime.create({ ...pod.spec, name: this.o.namePrefix + pod.spec.name });
      } catch (err) {
        const c = this.count(pod, `generation ${gen} could not start: ${(err as Error).message}`);
        return fallback(c.count >= this.o.maxCrashes ? "failed" : "creating", c.reason);
      }
    }
    if (!(await this.healthy(current.name, fresh ? FRESH_WAIT_MS : 0))) {
      const port = pod.spec.port ? ` on port ${pod.spec.port}` : "";
      return fallback("creating", `generation ${gen} does not answer${port} yet`);
    }
    const info = (await this.o.runtime.inspect(current.name)) ?? current;
    const since = this.servingSince.get(pod.pod_id);
    if (since?.generation === gen && Date.now() - since.at >= this.o.drainMs)
      for (const c of older) await this.removeContainer(c.name, `generation ${generationOf(c)} replaced`);
    this.crashes.delete(pod.pod_id);
    return this.report(pod, {
      state: "running",
      reason: null,
      address: this.advertise(info.address),
      serving_generation: gen,
    });
  }

  /** a health check; a container just created gets a short wait (most answer within a second), others one probe */
  private async healthy(name: string, waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (let delay = 25; ; delay = Math.min(250, delay * 2)) {
      if (await this.o.runtime.health(name)) return true;
      if (Date.now() + delay > deadline) return false;
      const info = await this.o.runtime.inspect(name);
      if (!info || info.status !== "running") return false; // exited: the next pass counts the crash
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /** the current generation's container exited: remove it, count the crash, back off */
  private async crashed(pod: DesiredPod, c: ContainerInfo): Promise<Crashes> {
    const tail = await this.o.runtime.logs(c.name, 5).catch(() => [] as string[]);
    await this.removeContainer(c.name, "exited");
    this.restarts.set(pod.pod_id, (this.restarts.get(pod.pod_id) ?? 0) + 1);
    const last = tail.length ? `; last log lines: ${tail.join(" | ").slice(-400)}` : "";
    return this.count(pod, `exited with code ${c.exitCode ?? "?"}${c.reason ? ` (${c.reason})` : ""}${last}`);
  }

  private count(pod: DesiredPod, reason: string): Crashes {
    const prev = this.crashes.get(pod.pod_id);
    const count = (prev?.generation === pod.generation ? prev.count : 0) + 1;
    const next = { generation: pod.generation, count, nextAt: Date.now() + backoffMs(count), reason };
    this.crashes.set(pod.pod_id, next);
    this.o.log("pod container failed", { pod: pod.pod_id, generation: pod.generation, crashes: count, reason });
    return next;
  }

  private async removeContainer(name: string, why: string): Promise<void> {
    this.o.log("removing container", { container: name, why });
    await this.o.runtime.stop(name, 5).catch(() => {});
    await this.o.runtime.remove(name);
  }

  /** 127.0.0.1:<port> as published by the runtime → <AGENT_ADVERTISE_HOST>:<port> */
  private advertise(address: string | null): string | null {
    if (!address) return null;
    const port = address.slice(address.lastIndexOf(":") + 1);
    return `${this.o.advertiseHost}:${port}`;
  }
}
