import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../../store/db.js";
import type { RuntimeProvider } from "../../runtime/provider.js";
import { containerName } from "../container-spec.js";
import type { PodRow } from "../repo.js";
import { recordCheckStatus, setReady, watchedPods } from "../releases/repo.js";
import { checkStatus } from "./ready.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { masked, probe } from "./probe.js";
import { resolveCheck, type ResolvedCheck } from "./spec.js";

interface Track {
  nextAt: number;
  passes: number;
  failures: number;
  running: boolean;
  lastFailure: { reason: string; at: string } | null;
}

/**
 * Watches the serving replica of this host's pods that declare liveness or readiness (issue 29), each check at
 * its own interval. Readiness failing failure_threshold times in a row takes the replica out of the edge
 * (`ready` false) until it passes success_threshold times again. Liveness failing failure_threshold times in a
 * row stops the replica (SIGTERM, its grace, SIGKILL): the reconciler sees it exited and restarts it with the
 * crash back-off. The counts live in this process; after a restart they start over, which only delays a verdict.
 */
export class CheckMonitor {
  private timer: NodeJS.Timeout | null = null;
  private readonly tracks = new Map<string, Track>();
  private ticking = false;

  constructor(
    private readonly deps: {
      db: Db;
      runtime: RuntimeProvider;
      hostId: string;
      log: FastifyBaseLogger;
      /** masks the pod's secrets in failure reasons (an exec check's output) */
      secrets?: SecretBox;
      /** the pod's reconcile, asked for at once after a liveness stop (not left to the next sweep) */
      reconcile: (podId: string) => Promise<void>;
    },
    private readonly tickMs = 250,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.tickMs).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const pods = await watchedPods(this.deps.db, this.deps.hostId);
      const seen = new Set<string>();
      for (const pod of pods)
        for (const kind of ["liveness", "readiness"] as const) {
          const declared = pod.checks?.[kind];
          if (!declared) continue;
          const key = `${pod.id}:${pod.serving_generation}:${pod.address}:${kind}`;
          seen.add(key);
          this.run(pod, kind, resolveCheck(declared), key);
        }
      for (const key of this.tracks.keys()) if (!seen.has(key)) this.tracks.delete(key);
    } catch (err) {
      this.deps.log.warn({ err }, "check monitor tick failed; the next one retries");
    } finally {
      this.ticking = false;
    }
  }

  private run(pod: PodRow, kind: "liveness" | "readiness", check: ResolvedCheck, key: string): void {
    let t = this.tracks.get(key);
    // a replica just switched to gets one interval before its first check
    if (!t)
      this.tracks.set(
        key,
        (t = {
          nextAt: Date.now() + check.interval_seconds * 1000,
          passes: 0,
          failures: 0,
          running: false,
          lastFailure: null,
        }),
      );
    if (t.running || Date.now() < t.nextAt) return;
    t.running = true;
    const track = t;
    void (async () => {
      const name = containerName(pod.id, pod.serving_generation!);
      const r = masked(this.deps.secrets, pod, await probe(this.deps.runtime, { name, address: pod.address }, check));
      track.nextAt = Date.now() + check.interval_seconds * 1000;
      const status = (state: "passing" | "failing") =>
        recordCheckStatus(this.deps.db, pod.id, kind, checkStatus(pod.serving_generation!, state, track.lastFailure));
      if (r.ok) {
        track.passes++;
        if (track.failures >= check.failure_threshold && track.passes >= check.success_threshold) {
          track.failures = 0;
          await status("passing");
          if (kind === "readiness") await setReady(this.deps.db, pod.id, pod.serving_generation!, true);
        } else if (track.passes >= check.success_threshold) track.failures = 0;
        return;
      }
      track.passes = 0;
      track.failures++;
      track.lastFailure = { reason: r.reason, at: new Date().toISOString() };
      if (track.failures !== check.failure_threshold) return;
      await status("failing");
      if (kind === "readiness") {
        await setReady(this.deps.db, pod.id, pod.serving_generation!, false);
        return;
      }
      this.deps.log.warn({ pod: pod.id, reason: r.reason }, "liveness check failed: the replica is restarted");
      await this.deps.runtime.stop(name, pod.stop_grace_seconds).catch(() => {});
      await this.deps.reconcile(pod.id);
    })()
      .catch((err) => this.deps.log.warn({ err, pod: pod.id }, "check failed to run"))
      .finally(() => (track.running = false));
  }
}
