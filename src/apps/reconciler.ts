import type { FastifyBaseLogger } from "fastify";
import type { ContainerInfo } from "../runtime/provider.js";
import { asApiError } from "../http/errors.js";
import * as repo from "./repo.js";
import {
  containerName,
  containerSpecOf,
  LABEL_GENERATION,
  LABEL_HOST,
  LABEL_POD,
  type SpecDeps,
} from "./container-spec.js";
import { cleanUp, generationOf, POD_CONTAINER_NAME, removeContainer, unfinished } from "./cleanup.js";
import { volumesBlocking } from "./volumes/attach.js";
import { awaitReady } from "./checks/ready.js";
import { releaseServing, rolloutOf } from "./releases/repo.js";
import { rollBack } from "./rollout/rollback.js";
import { drainReplicas } from "./rollout/drain.js";
import { answersSoon } from "./idle/ready.js";
import { restartGroupIdleClock } from "./idle/repo.js";
import { inTransaction } from "../store/db.js";
import { recordRolloutOutcome } from "./rollout/outcome-events.js";

/**
 * Drives a pod's containers to its row: the row is the desired state, the containers found by label are the
 * observed state. Every step can be cut by a crash and simply runs again: creation is idempotent by name, a
 * generation's container is found by label after a restart (adoption), and an older generation keeps serving
 * until the new one answers its health check (rolling update). Only one reconcile runs per pod at a time: one
 * per process (PodWorker), and a claim on the row across the host's processes (repo.claimReconcile).
 *
 * The reconciler owns every container it ever started: each pass first removes what the pod must not have (a
 * generation neither wanted nor serving, a removal or start cut half-way: cleanup.ts), so a rollout cut by a
 * kill at any step converges to the pod's one container, and one stuck container never holds back the others.
 */
export interface ReconcilerDeps extends SpecDeps {
  log: FastifyBaseLogger;
  /** how long an old generation keeps serving after the new one is healthy (the edge's switch-over time) */
  drainMs: number;
  healthTimeoutMs: number;
  /** crashes in a row, each restarted with back-off, before the pod is failed */
  maxCrashes: number;
  /** this process's lease id (src/hosts): claims of a dead process are taken over at once */
  processId: () => string;
  /** asks for another reconcile of the pod after `seconds` (back-off restarts) */
  again: (podId: string, seconds: number) => void;
}

/** an idle-stopped pod keeps its current generation's container, stopped */
const keptAsleep = (pod: repo.PodRow, c: ContainerInfo) =>
  pod.desired_state === "idle_stopped" && generationOf(c) === pod.generation && !unfinished(c);

/** a container that ran this long before it crashed starts the back-off over */
const STABLE_MS = 60_000;
const backoffSeconds = (crashes: number) => Math.min(60, 2 ** (crashes - 1));

export async function reconcilePod(deps: ReconcilerDeps, podId: string): Promise<void> {
  const me = deps.processId();
  if (!(await repo.claimReconcile(deps.db, podId, me))) return; // another live process is on it
  try {
    // a change made while a step ran (a new generation, or a stop) refuses its write: go again until the row stands still
    for (let i = 0; i < 5; i++) if (!(await step(deps, podId))) break;
  } finally {
    await repo.releaseReconcile(deps.db, podId, me);
  }
}

/** One pass; true when the row changed meanwhile and another pass is due. */
async function step(deps: ReconcilerDeps, podId: string): Promise<boolean> {
  const pod = await repo.podById(deps.db, podId);
  if (!pod || pod.host_id !== deps.hostId) return false;
  const gen = pod.generation;
  const early = await wakeFirst(deps, pod);
  const all = early ? [early] : await deps.runtime.list({ [LABEL_POD]: pod.id });
  // neither the wanted generation nor the one serving, or cut half-way: left behind by a cut rollout or removal
  const stale = all.filter(
    (c) => unfinished(c) || (generationOf(c) !== gen && generationOf(c) !== pod.serving_generation),
  );
  const containers = all.filter((c) => !stale.includes(c));
  const cleaned = await cleanUp(deps, pod.id, stale, `generation ${gen} is wanted`);
  if (pod.desired_state !== "running") {
    let left = cleaned.left;
    let kept: string | null = null;
    for (const c of containers)
      if (keptAsleep(pod, c)) {
        // stopped for idleness: the container stays, stopped, so a wake is a `podman start` (src/apps/README.md);
        // its published address, read while it ran, is where the wake's requests go (wakeFirst)
        if (c.status !== "running") continue;
        kept = c.address;
        await deps.runtime.stop(c.name, pod.stop_grace_seconds).catch(() => left++);
      } else if (!(await removeContainer(deps, c))) left++;
    if (left) return false; // recorded removed/stopped only once nothing of it runs: the sweep retries
    const state = pod.desired_state === "removed" ? "removed" : "stopped";
    const written = await repo.recordObserved(deps.db, pod, {
      state,
      address: null,
      network_address: null,
      serving_generation: null,
      kept_address: kept,
    });
    return !written;
  }
  let current = containers.find((c) => generationOf(c) === gen) ?? null;
  const older = containers.filter((c) => generationOf(c) !== gen);
  let woken = early !== null;
  if (current && current.status !== "running" && pod.state === "stopped" && pod.woken_at) {
    // woken after an idle stop (the wake keeps the generation and the observed `stopped`): the kept container
    // starts again (wakeFirst found no container to start, or its start failed: tried once more here); one that
    // will not is replaced by a new one below
    current = await deps.runtime.start(current.name).catch(async (err) => {
      deps.log.warn({ err, pod: pod.id }, "idle-stopped container did not start; a new one is made");
      await removeContainer(deps, current!);
      return null;
    });
    woken = current !== null;
  }
  if (current && current.status !== "running") {
    // a new release that died before it served (seen after a restart of the platform): back to the serving one
    if (await rollBack(deps, pod, current, `exited with code ${current.exitCode ?? "?"} before it was ready`)) {
      await removeContainer(deps, current);
      return true;
    }
    await crashed(deps, pod, current, older);
    return false;
  }
  if (!current) {
    // failed for good: only a new generation (update, restart) resets crash_count and tries again
    if (pod.state === "failed" && pod.crash_count >= deps.maxCrashes) return false;
    if (await heldByVolumes(deps, pod)) return false;
    if (pod.next_restart_at && pod.next_restart_at.getTime() > Date.now()) {
      deps.again(pod.id, (pod.next_restart_at.getTime() - Date.now()) / 1000);
      return false;
    }
    try {
      current = await deps.runtime.create(await containerSpecOf(deps, pod));
    } catch (err) {
      const message = asApiError(err)?.message ?? (err as Error).message;
      deps.log.warn({ err, pod: pod.id }, "pod container could not be created");
      // an image that cannot be pulled or a spec the runtime refuses: retried with back-off like a crash
      const serving = older.some((c) => c.status === "running");
      const crashes = pod.crash_count + 1;
      const failed = crashes >= deps.maxCrashes;
      // the pod's state and its rollout's in one transaction: a reader never sees the pod failed, the rollout not
      await inTransaction(deps.db, async (tx) => {
        await repo.recordObserved(tx, pod, {
          crash_count: crashes,
          state: serving ? "running" : failed ? "failed" : "creating",
          state_reason: `generation ${gen} could not start: ${message}${failed ? "" : "; retrying"}`,
          next_restart_at: failed ? null : new Date(Date.now() + backoffSeconds(crashes) * 1000),
        });
        if (failed) await repo.rolloutCrashed(tx, pod.id, gen, true);
      });
      if (!failed) deps.again(pod.id, backoffSeconds(crashes));
      return false;
    }
  }
  const rollout = await rolloutOf(deps.db, pod.id, gen);
  // a new release must be ready within the pod's deadline (counted from its rollout), else it is rolled back
  const deadline = (rollout?.created_at.getTime() ?? Date.now()) + pod.rollout_deadline_seconds * 1000;
  const rollingBack = pod.serving_generation !== null && pod.serving_generation !== gen;
  const until = Math.min(
    Date.now() + deps.healthTimeoutMs,
    rollingBack ? Math.max(deadline, Date.now() + 1000) : Infinity,
  );
  // a woken pod with the default readiness answers held requests as soon as its port does (idle/ready.ts)
  const quick = woken && !pod.checks && current.address ? await answersSoon(current.address, 5000) : false;
  const ready = quick
    ? ({ result: "healthy" } as const)
    : await awaitReady(deps, pod, current.name, until, async () => {
        const now = await repo.podById(deps.db, pod.id);
        return !!now && now.generation === pod.generation && now.desired_state === pod.desired_state;
      });
  if (ready.result === "superseded") return true; // deleted, stopped or changed while starting: the next pass follows
  if (ready.result === "exited" || ready.result === "failed") {
    const info = await deps.runtime.inspect(current.name);
    const why =
      ready.result === "failed" ? ready.reason : `exited with code ${info?.exitCode ?? "?"} before it was ready`;
    if (await rollBack(deps, pod, info, why)) {
      if (info) await removeContainer(deps, info);
      return true;
    }
    if (ready.result === "failed" && info) await deps.runtime.stop(info.name, 0).catch(() => {});
    const after = await deps.runtime.inspect(current.name);
    if (after) await crashed(deps, pod, after, older);
    return false;
  }
  if (ready.result === "timeout") {
    if (Date.now() >= deadline) {
      const why = `not ready within ${pod.rollout_deadline_seconds} s: ${ready.reason}`;
      if (await rollBack(deps, pod, current, why)) {
        await removeContainer(deps, current);
        return true;
      }
    }
    await repo.recordObserved(deps.db, pod, {
      state_reason: `generation ${gen} is not ready yet: ${ready.reason}`,
    });
    deps.again(pod.id, 5);
    return false;
  }
  const info = quick ? current : ((await deps.runtime.inspect(current.name)) ?? current);
  // a woken app's idle clock runs from when it serves, not from the wake: a start longer than the idle time
  // would otherwise be stopped again by the sweep before the held requests (counted at the next flush) got through
  if (woken && pod.group_id) await restartGroupIdleClock(deps.db, pod.group_id);
  // the pod's switch and its release's "serving" commit together: a client that sees the new generation serving
  // never reads the release still pending (a CI run under load did)
  const switched = await inTransaction(deps.db, async (tx) => {
    const observed = await repo.recordObserved(
      tx,
      pod,
      {
        state: "running",
        state_reason: null,
        address: info.address,
        network_address: info.networkAddress,
        serving_generation: gen,
        ready: true,
      },
      { awakeNow: woken },
    );
    if (!observed) return false;
    await repo.rolloutServing(tx, pod.id, gen);
    await releaseServing(tx, pod.id, pod.release);
    // a change took over from a serving generation (not a first start); a group's member: its group tells
    if (pod.serving_generation !== null && pod.serving_generation !== gen && !pod.group_id)
      await recordRolloutOutcome(
        tx,
        "succeeded",
        { kind: pod.owner_kind, id: pod.owner_id },
        { kind: "pod", id: pod.id },
        { name: pod.name, release: pod.release, generation: gen },
      );
    return true;
  });
  if (!switched) return true;
  await drainReplicas(deps, pod, older);
  if (early && quick) await describeWoken(deps, pod, early);
  return false;
}

/**
 * A wake (idle/service.ts: desired `running` at the same generation, observed still `stopped`, `woken_at` set)
 * starts the kept container by its name before anything is listed, and without inspecting it when the idle stop
 * recorded its published address (`kept_address`: podman chose that host port when it created the container, and
 * `start` binds it again or fails). On the held request's path that leaves one podman run, `start`, where listing
 * (`ps`, `inspect`) and describing (`inspect`) had cost twice the start again (issue 30's figure). Nothing is missed
 * by not listing first: an idle stop is recorded `stopped` only once the pod has no container but the kept one
 * (the pass above), and only claimed reconciles make containers. A start that fails (no such container: a user
 * stop removed it, a new generation; or it would not start) returns null and the pass lists as usual.
 */
async function wakeFirst(deps: ReconcilerDeps, pod: repo.PodRow): Promise<ContainerInfo | null> {
  if (pod.desired_state !== "running" || pod.state !== "stopped" || !pod.woken_at) return null;
  const name = containerName(pod.id, pod.generation);
  const { runtime } = deps;
  if (!pod.kept_address || !runtime.resume) return runtime.start(name).catch(() => null);
  try {
    await runtime.resume(name);
  } catch {
    return null;
  }
  return {
    name,
    id: "",
    status: "running",
    address: pod.kept_address,
    networkAddress: null, // given anew at each start: read after the held requests are through (describeWoken)
    exitCode: null,
    startedAt: null,
    finishedAt: null,
    labels: { [LABEL_POD]: pod.id, [LABEL_GENERATION]: String(pod.generation), [LABEL_HOST]: deps.hostId },
  };
}

/**
 * After a wake served its held requests: the container as podman describes it, its owner-network address (given
 * anew at each start) and, should the published address ever differ from the one assumed, the right one (logged;
 * written only while the row is still the one woken).
 */
async function describeWoken(deps: ReconcilerDeps, pod: repo.PodRow, woken: ContainerInfo): Promise<void> {
  if (woken.networkAddress && woken.id) return; // described already (started without a recorded address)
  const info = await deps.runtime.inspect(woken.name).catch(() => null);
  if (!info || info.status !== "running") return;
  if (info.address !== woken.address)
    deps.log.warn({ pod: pod.id, kept: woken.address, now: info.address }, "woken container's address changed");
  await repo.recordObserved(deps.db, pod, { address: info.address, network_address: info.networkAddress });
}

/**
 * A volume still being created holds the pod `pending` with the reason; a failed one fails it with the
 * volume's reason. The volume job asks for a reconcile of its pods when it finishes (volumes/jobs.ts).
 */
async function heldByVolumes(deps: ReconcilerDeps, pod: repo.PodRow): Promise<boolean> {
  const { pending, failed } = await volumesBlocking(deps.db, pod.volumes);
  const reason = failed ?? pending;
  if (!reason) return false;
  if (pod.state !== (failed ? "failed" : "pending") || pod.state_reason !== reason)
    await repo.recordObserved(deps.db, pod, { state: failed ? "failed" : "pending", state_reason: reason });
  return true;
}

/**
 * The current generation's container exited: restart it with back-off, or after `maxCrashes` in a row
 * fail the pod with the exit code and the last log lines. An older generation still running keeps
 * serving (a broken update does not take the app down); the pod then stays running with the reason shown.
 */
async function crashed(deps: ReconcilerDeps, pod: repo.PodRow, c: ContainerInfo, older: ContainerInfo[]) {
  const ranMs = c.startedAt && c.finishedAt ? c.finishedAt.getTime() - c.startedAt.getTime() : 0;
  const crashes = ranMs > STABLE_MS ? 1 : pod.crash_count + 1;
  const tail = await deps.runtime.logs(c.name, 5).catch(() => []);
  await removeContainer(deps, c);
  const serving = older.some((o) => o.status === "running") && pod.serving_generation !== null;
  const failed = crashes >= deps.maxCrashes;
  const last = tail.length ? `; last log lines: ${tail.join(" | ").slice(-400)}` : "";
  const reason = `exited with code ${c.exitCode ?? "?"} (${crashes} crash${crashes > 1 ? "es" : ""} in a row)${last}`;
  // one transaction, as above: the pod's state and its rollout's restarts and state change together
  await inTransaction(deps.db, async (tx) => {
    await repo.recordObserved(tx, pod, {
      crash_count: crashes,
      restart_count: pod.restart_count + 1,
      state: failed && !serving ? "failed" : serving ? "running" : "creating",
      state_reason: failed ? `${reason}; not restarted again` : `${reason}; restarting`,
      next_restart_at: failed ? null : new Date(Date.now() + backoffSeconds(crashes) * 1000),
      ...(serving ? {} : { address: null, serving_generation: null }),
    });
    await repo.rolloutCrashed(tx, pod.id, pod.generation, failed);
  });
  if (!failed) deps.again(pod.id, backoffSeconds(crashes));
}

/**
 * Every container of this host's pods against the store: pods whose containers are not what the row says
 * get a reconcile, containers of pods the store does not know (or removed) are orphans and go (counted on a
 * removed pod's row), and conmon/runc processes left by removed pod containers are killed. Run at start
 * (adoption after a restart) and every few seconds (crash detection). Containers without the platform's
 * labels are never listed, so never touched.
 */
export async function sweepHost(
  deps: ReconcilerDeps,
  reconcile: (podId: string) => Promise<void>,
): Promise<{ pods: number; containers: number; reconciled: number; orphans: number; strays: number }> {
  const [pods, containers] = await Promise.all([
    repo.podsOnHost(deps.db, deps.hostId),
    deps.runtime.list({ [LABEL_HOST]: deps.hostId }),
  ]);
  const byPod = new Map<string, ContainerInfo[]>();
  for (const c of containers) {
    const id = c.labels[LABEL_POD];
    if (id) byPod.set(id, [...(byPod.get(id) ?? []), c]);
  }
  const known = new Set(pods.map((p) => p.id));
  let orphans = 0;
  for (const [id, cs] of byPod) {
    if (known.has(id)) continue;
    orphans += (await cleanUp(deps, id, cs, "its pod is deleted or unknown")).removed;
  }
  const strays = (await deps.runtime.reapStrays?.((name) => POD_CONTAINER_NAME.test(name)).catch(() => [])) ?? [];
  if (strays.length) deps.log.warn({ containers: strays }, "processes of removed pod containers killed");
  const due = pods.filter((p) => {
    const cs = byPod.get(p.id) ?? [];
    if (p.desired_state !== "running")
      return (
        cs.some((c) => !keptAsleep(p, c) || c.status === "running") ||
        p.state !== (p.desired_state === "removed" ? "removed" : "stopped")
      );
    if (p.state === "failed" && p.next_restart_at === null && p.crash_count >= deps.maxCrashes) return false;
    const current = cs.find((c) => generationOf(c) === p.generation);
    return !current || current.status !== "running" || p.serving_generation !== p.generation || cs.length > 1;
  });
  // bounded: adopting many pods at once must not take every store connection
  const queue = [...due];
  await Promise.all(
    Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let p = queue.shift(); p; p = queue.shift())
        await reconcile(p.id).catch((err) => {
          deps.log.error({ err, pod: p!.id }, "pod reconcile failed; the next sweep retries");
        });
    }),
  );
  return { pods: pods.length, containers: containers.length, reconciled: due.length, orphans, strays: strays.length };
}
