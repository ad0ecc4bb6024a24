import type { FastifyBaseLogger } from "fastify";
import { inTransaction, type Db, type Queryable } from "../../store/db.js";
import { asApiError } from "../../http/errors.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { JobSpec } from "../../kernel/area.js";
import { lastRequests } from "../../edge/public.js";
import { recordEvent } from "../../events/public.js";
import type { EdgeWakeOutcome } from "../contract.js";
import type { PodsService } from "../service.js";
import { startAdmission } from "../admission.js";
import * as pods from "../repo.js";
import { groupById, membersOf } from "../groups/repo.js";
import { groupAdmission } from "../groups/admission.js";
import { idleCandidates, idleStopGroup, idleStopPod, markGroupWoken, markPodWoken } from "./repo.js";

export const IDLE_SWEEP_JOB = "apps.idle-sweep";

export interface IdleDeps {
  db: Db;
  kernel: Pick<Kernel, "admit">;
  pods: Pick<PodsService, "kick" | "knownSize">;
  log: FastifyBaseLogger;
}

type Placed = { id: string; host_id: string | null };

/**
 * Scale-to-zero (issue 30): the sweep stops pods and groups idle longer than their idle_stop_seconds (desired
 * state `idle_stopped`, which meters nothing), and `wake` starts one again for the edge, admitted like a start.
 * Both are one transaction on the app's row, so any number of sweeps and edge processes agree.
 */
export function idleService(deps: IdleDeps) {
  const { db, kernel } = deps;
  const kick = async (placed: Placed[]) => {
    for (const p of placed) await deps.pods.kick(p);
  };

  /** Stops what has been idle long enough; returns the ids of the apps stopped ("pod:<id>", "group:<id>"). */
  async function sweep(): Promise<string[]> {
    const candidates = await idleCandidates(db);
    if (!candidates.length) return [];
    const last = await lastRequests(
      db,
      candidates.map((c) => ({ kind: c.kind, id: c.id })),
    );
    const stopped: string[] = [];
    for (const c of candidates) {
      const request = last.get(`${c.kind}:${c.id}`);
      const lastActive = request && request > c.awake_since ? request : c.awake_since;
      const members = await inTransaction(db, async (tx) => {
        const done =
          c.kind === "group"
            ? await idleStopGroup(tx, c.id, c.awake_key, lastActive)
            : await idleStopPod(tx, c.id, c.awake_key, lastActive);
        if (!done) return null; // a request (or a change) came meanwhile
        await recordEvent(tx, {
          type: "app.scaled_to_zero",
          owner: { kind: done.app.owner_kind, id: done.app.owner_id },
          resource: { kind: c.kind === "group" ? "pod_group" : "pod", id: c.id },
          data: { name: done.app.name, idle_stop_seconds: c.idle_stop_seconds, last_request_at: request ?? null },
        });
        return done.members;
      });
      if (!members) continue;
      stopped.push(`${c.kind}:${c.id}`);
      deps.log.info({ app: `${c.kind}:${c.id}`, idle_stop_seconds: c.idle_stop_seconds }, "app stopped while idle");
      await kick(members);
    }
    return stopped;
  }

  async function wakePodIn(tx: Queryable, id: string): Promise<{ outcome: EdgeWakeOutcome; kicked: Placed[] }> {
    const cur = await pods.podById(tx, id, { forUpdate: true });
    if (!cur || cur.desired_state === "removed") return { outcome: { kind: "gone" }, kicked: [] };
    // a group's member is woken with its whole group
    if (cur.group_id) return wakeGroupIn(tx, cur.group_id);
    // already woken by another request or edge process (or stopped by its owner meanwhile: nothing to wake)
    if (cur.desired_state !== "idle_stopped") return { outcome: { kind: "started" }, kicked: [] };
    await kernel.admit(tx, startAdmission(cur, { kind: cur.owner_kind, id: cur.owner_id }, cur.account_id));
    // the same generation: its kept container starts again (reconciler.ts), no new one is made
    const next = await pods.setDesired(tx, cur.id, "running");
    await markPodWoken(tx, cur.id);
    await recordEvent(tx, {
      type: "app.woken",
      owner: { kind: cur.owner_kind, id: cur.owner_id },
      resource: { kind: "pod", id: cur.id },
      data: { name: cur.name },
    });
    return { outcome: { kind: "started" }, kicked: [next] };
  }

  async function wakeGroupIn(tx: Queryable, id: string): Promise<{ outcome: EdgeWakeOutcome; kicked: Placed[] }> {
    const g = await groupById(tx, id, { forUpdate: true });
    if (!g || g.desired_state === "removed") return { outcome: { kind: "gone" }, kicked: [] };
    if (g.desired_state !== "idle_stopped") return { outcome: { kind: "started" }, kicked: [] };
    const sleeping = (await membersOf(tx, g.id)).filter((m) => m.desired_state === "idle_stopped");
    // billing held the sleeping members meanwhile (lifecycle-repo.ts): they start when the hold is released
    if (!sleeping.length)
      return {
        outcome: { kind: "refused", status: 402, code: "conflict", message: "it is held stopped by billing." },
        kicked: [],
      };
    // the group's members start again: admitted as a start of that many instances (concurrent-run limits count them)
    await kernel.admit(
      tx,
      groupAdmission(g, {
        update: true,
        starts: Math.max(1, sleeping.length),
        image: g.spec.image,
        gpu: deps.pods.knownSize(g.spec.size)?.gpu ? sleeping.length : 0,
        shape: "pod-group",
        partOf: g.id,
      }),
    );
    await markGroupWoken(tx, g.id);
    const kicked: Placed[] = [];
    for (const m of sleeping) {
      kicked.push(await pods.setDesired(tx, m.id, "running"));
      await markPodWoken(tx, m.id);
    }
    await recordEvent(tx, {
      type: "app.woken",
      owner: { kind: g.owner_kind, id: g.owner_id },
      resource: { kind: "pod_group", id: g.id },
      data: { name: g.name, members: sleeping.length },
    });
    return { outcome: { kind: "started" }, kicked };
  }

  /** The edge's wake: started (or under way), gone, or refused by admission (the app stays stopped). */
  async function wake(target: { kind: string; id: string }): Promise<EdgeWakeOutcome> {
    try {
      const { outcome, kicked } = await inTransaction(db, (tx) =>
        target.kind === "group" ? wakeGroupIn(tx, target.id) : wakePodIn(tx, target.id),
      );
      await kick(kicked);
      if (kicked.length) deps.log.info({ app: `${target.kind}:${target.id}` }, "app woken by a request");
      return outcome;
    } catch (err) {
      const api = asApiError(err);
      if (!api) throw err;
      deps.log.info({ app: `${target.kind}:${target.id}`, code: api.code }, "wake refused by admission");
      return { kind: "refused", status: api.status, code: api.code, message: api.message };
    }
  }

  /** APPS_IDLE_SWEEP_MS: sweeps this often in this process too, beside the every-minute job (a faster reaction) */
  let timer: NodeJS.Timeout | null = null;
  const every = (ms: number) => {
    timer = setInterval(
      () => void sweep().catch((err) => deps.log.error({ err }, "idle sweep failed; the next one retries")),
      ms,
    );
    timer.unref();
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
  };

  return { sweep, wake, every, stop };
}

export type IdleService = ReturnType<typeof idleService>;

/** Every minute (pg-boss cron), on whichever process takes it: stops what has been idle long enough. */
export function idleJobs(idle: IdleService): JobSpec[] {
  return [{ name: IDLE_SWEEP_JOB, cron: "* * * * *", handler: async () => void (await idle.sweep()) }];
}
