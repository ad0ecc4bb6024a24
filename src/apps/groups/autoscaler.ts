import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import { creatorPrincipal } from "../../auth/creator-principal.js";
import { everyMinute, type JobSpec } from "../../kernel/area.js";
import type { RuntimeProvider } from "../../runtime/provider.js";
import { auditedTransaction } from "../../audit/record.js";
import { asApiError } from "../../http/errors.js";
import type { PodRow } from "../repo.js";
import { LABEL_GENERATION, LABEL_POD } from "../container-spec.js";
import { podSizes } from "../sizes.js";
import type { GroupsService } from "./service.js";
import * as repo from "./repo.js";

export const AUTOSCALE_JOB = "apps.autoscale";

/** The autoscaler acts for the group's owner, as its creator; audit rows name it (action, ip "autoscaler"). */

export interface AutoscalerDeps {
  db: Db;
  runtime: RuntimeProvider;
  groups: GroupsService;
  hostId: string;
  gpuCatalogFile: string;
  log: FastifyBaseLogger;
  /** how often this host samples its members (APPS_AUTOSCALE_MS) */
  intervalMs: number;
  /** how long after a step the group may shrink (APPS_AUTOSCALE_COOLDOWN_MS); growth waits only for the last step to be running */
  cooldownMs: number;
}

/**
 * The principal the autoscaler changes a group with: the group's owner, acting as the account that
 * created the group (the audit model has an account on every row), with an audit draft that says the
 * autoscaler did it (action autoscalePodGroup, ip and request id "autoscaler").
 */
export function autoscalerPrincipal(g: repo.GroupRow, status: number): Principal {
  return creatorPrincipal(g, "autoscaler", {
    action: "autoscalePodGroup",
    target: g.id,
    ip: "autoscaler",
    requestId: `autoscaler:${g.id}:${Date.now()}`,
    status,
  });
}

/**
 * A member's CPU as a percent of what its size allots (a nano pod busy on its quarter CPU is at 100),
 * sampled from its serving container on this host; null when it has none running.
 */
async function cpuOf(deps: AutoscalerDeps, pod: PodRow, vcpu: number): Promise<number | null> {
  const cs = await deps.runtime.list({ [LABEL_POD]: pod.id });
  const serving =
    cs.find((c) => c.labels[LABEL_GENERATION] === String(pod.serving_generation ?? pod.generation)) ?? null;
  if (!serving || serving.status !== "running") return null;
  const stats = await deps.runtime.stats(serving.name).catch(() => null);
  return stats ? stats.cpuPercent / vcpu : null;
}

/**
 * One autoscaling step for a group, from the CPU of its members on this host: out by one member when the
 * average is above the target (the previous step done, admitted with `growth`: a spend cap reached
 * holds the group where it is and says why in scale_hold), in by one when below half the target after
 * the cooldown. Replicas stay within [replica_min, replica_max]; nothing running is stopped by a cap.
 */
export async function scaleGroup(deps: AutoscalerDeps, groupId: string): Promise<void> {
  const g = await repo.groupById(deps.db, groupId);
  if (!g || g.desired_state !== "running") return;
  const members = await repo.membersOf(deps.db, g.id);
  const size = podSizes(deps.gpuCatalogFile).find((s) => s.id === g.spec.size);
  const local = members.filter((m) => m.host_id === deps.hostId && m.state === "running");
  if (!size || !local.length) return;
  const samples = (await Promise.all(local.map((m) => cpuOf(deps, m, size.vcpu)))).filter(
    (s): s is number => s !== null,
  );
  if (!samples.length) return;
  const avg = samples.reduce((a, b) => a + b, 0) / samples.length;
  // the last step has taken effect: every member it asked for exists and none is still starting
  const settled = members.length === g.desired_replicas && !members.some((m) => m.state === "creating");
  const since = g.last_scaled_at ? Date.now() - g.last_scaled_at.getTime() : Infinity;

  if (avg > g.target_cpu_percent && g.desired_replicas < g.replica_max) {
    if (!settled) return;
    const refusal = await deps.groups.growthRefusal(g);
    if (refusal) {
      if (refusal !== g.scale_hold) {
        await repo.updateGroup(deps.db, g.id, { scale_hold: refusal });
        deps.log.info({ group: g.id, reason: refusal }, "pod group holds: growth refused");
      }
      return;
    }
    await step(deps, g, g.desired_replicas + 1, avg);
    return;
  }
  // a hold lasts while growth would be refused; it clears as soon as growth is admitted again
  if (g.scale_hold && !(await deps.groups.growthRefusal(g)))
    await repo.updateGroup(deps.db, g.id, { scale_hold: null });
  if (avg < g.target_cpu_percent / 2 && g.desired_replicas > g.replica_min && settled && since >= deps.cooldownMs)
    await step(deps, g, g.desired_replicas - 1, avg);
}

async function step(deps: AutoscalerDeps, g: repo.GroupRow, desired: number, avg: number): Promise<void> {
  const p = autoscalerPrincipal(g, 200);
  const next = await auditedTransaction(deps.db, p, async (tx) => {
    const cur = await repo.groupById(tx, g.id, { forUpdate: true });
    // a user change meanwhile wins: decide again next period
    if (!cur || cur.desired_state !== "running" || cur.desired_replicas !== g.desired_replicas) return null;
    return repo.updateGroup(tx, g.id, {
      desired_replicas: Math.min(cur.replica_max, Math.max(cur.replica_min, desired)),
      last_scaled_at: new Date(),
      scale_hold: desired > g.desired_replicas ? null : undefined,
    });
  });
  if (!next) return;
  deps.log.info(
    { group: g.id, from: g.desired_replicas, to: next.desired_replicas, cpu: Math.round(avg) },
    "pod group scaled",
  );
  await deps.groups.convergeHeld(p, next.id);
}

/** Members as many as each group wants (a failed creation, a removed member, a group removed meanwhile). */
async function convergeAll(deps: AutoscalerDeps): Promise<void> {
  for (const g of await repo.groupsOffTarget(deps.db)) {
    await repo
      .withGroupLock(deps.db, g.id, false, () => deps.groups.convergeHeld(autoscalerPrincipal(g, 200), g.id))
      .catch(async (err) => {
        deps.log.warn({ err, group: g.id }, "pod group could not reach its replica count");
        // a payment refusal (funds gone) is shown where the group is read; it clears once growth is admitted
        const api = asApiError(err);
        const why = api?.status === 402 ? `${api.code}: ${api.message}` : null;
        if (why && why !== g.scale_hold) await repo.updateGroup(deps.db, g.id, { scale_hold: why });
      })
      .catch(() => null);
  }
}

/** This host's autoscaler: one pass over the groups with members here every APPS_AUTOSCALE_MS. */
export class Autoscaler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(readonly deps: AutoscalerDeps) {}

  /** one pass (a pass still running is joined, never doubled) */
  tick(): Promise<void> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<void> {
    for (const g of await repo.groupsOnHost(this.deps.db, this.deps.hostId)) {
      await repo
        .withGroupLock(this.deps.db, g.id, false, () => scaleGroup(this.deps, g.id))
        .catch((err) => this.deps.log.error({ err, group: g.id }, "autoscaling step failed; the next period retries"));
    }
    await convergeAll(this.deps);
  }

  start(): void {
    this.timer = setInterval(() => {
      void this.tick().catch((err) => this.deps.log.error({ err }, "autoscaler pass failed"));
    }, this.deps.intervalMs).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }
}

/** The per-host cron job: the in-process interval is the fast path, this one survives a stopped timer. */
export function autoscaleJobs(autoscaler: Autoscaler): JobSpec[] {
  return [everyMinute(AUTOSCALE_JOB, () => autoscaler.tick(), { expireInSeconds: 300, perHost: true })];
}
