import type { Db } from "../../store/db.js";
import type { RuntimeProvider } from "../../runtime/provider.js";
import type { PodRow } from "../repo.js";
import { recordCheckStatus } from "../releases/repo.js";
import { masked, probe, type ProbeResult } from "./probe.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { resolveCheck, type CheckKind, type ResolvedCheck } from "./spec.js";

export type ReadyResult =
  | { result: "healthy" }
  | { result: "exited" }
  | { result: "superseded" }
  /** its startup check failed failure_threshold times in a row: restarted like a crash */
  | { result: "failed"; reason: string }
  /** not ready within the wait: the reason is the last failure */
  | { result: "timeout"; reason: string };

export interface ReadyDeps {
  db: Db;
  runtime: RuntimeProvider;
  /** masks the pod's secrets in failure reasons (an exec check's output) */
  secrets?: SecretBox;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A check's status as the pod shows it (check_status.<kind>). */
export const checkStatus = (
  generation: number,
  state: "pending" | "passing" | "failing",
  lastFailure: { reason: string; at: string } | null,
) => ({ generation, state, last_failure: lastFailure, checked_at: new Date().toISOString() });

/**
 * Waits until a new replica is ready to take traffic: its startup check passes once (if declared), then its
 * readiness passes success_threshold times in a row (the declared check, else today's TCP connect, polled
 * quickly). Stops at once when the container exits, or the pod is deleted, stopped or changed meanwhile
 * (`current` reads the row again, at most once a second).
 */
export async function awaitReady(
  deps: ReadyDeps,
  pod: PodRow,
  name: string,
  untilMs: number,
  current: () => Promise<boolean>,
): Promise<ReadyResult> {
  const startup = pod.checks?.startup ? resolveCheck(pod.checks.startup) : null;
  const readiness = pod.checks?.readiness ? resolveCheck(pod.checks.readiness) : null;
  let phase: CheckKind = startup ? "startup" : "readiness";
  let [passes, failures] = [0, 0];
  let lastFailure: { reason: string; at: string } | null = null;
  let checked = Date.now();
  let delay = 25;
  const record = (kind: CheckKind, state: "pending" | "passing" | "failing") =>
    recordCheckStatus(deps.db, pod.id, kind, checkStatus(pod.generation, state, lastFailure)).catch(() => {});
  while (Date.now() < untilMs) {
    const info = await deps.runtime.inspect(name);
    if (!info || info.status === "exited") return { result: "exited" };
    if (Date.now() - checked > 1000) {
      checked = Date.now();
      if (!(await current())) return { result: "superseded" };
    }
    const check = phase === "startup" ? startup : readiness;
    const r: ProbeResult = check
      ? masked(deps.secrets, pod, await probe(deps.runtime, info, check))
      : (await deps.runtime.health(name))
        ? { ok: true }
        : { ok: false, reason: `no answer on port ${pod.port ?? "-"} yet` };
    if (r.ok) {
      passes++;
      failures = 0;
      if (phase === "startup") {
        await record("startup", "passing");
        [phase, passes, lastFailure] = ["readiness", 0, null];
        continue;
      }
      if (passes >= (readiness?.success_threshold ?? 1)) {
        await record("readiness", "passing");
        return { result: "healthy" };
      }
    } else {
      passes = 0;
      failures++;
      const changed = lastFailure?.reason !== r.reason;
      lastFailure = { reason: r.reason, at: new Date().toISOString() };
      if (phase === "startup" && failures >= startup!.failure_threshold) {
        await record("startup", "failing");
        return { result: "failed", reason: `startup check failed ${failures} times in a row: ${r.reason}` };
      }
      // declared checks show each new reason; the default one only once it has missed a while
      if ((check && changed) || failures === (check?.failure_threshold ?? 20)) await record(phase, "failing");
    }
    delay = check ? intervalMs(check) : Math.min(250, delay * 2);
    await sleep(Math.max(0, Math.min(delay, untilMs - Date.now())));
  }
  return { result: "timeout", reason: lastFailure?.reason ?? `not ready on port ${pod.port ?? "-"}` };
}

const intervalMs = (c: ResolvedCheck) => c.interval_seconds * 1000;
