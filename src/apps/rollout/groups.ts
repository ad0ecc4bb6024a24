import { systemPrincipal, type Principal } from "../../auth/principal.js";
import { inTransaction, type Db } from "../../store/db.js";
import { groupReleaseRolledBack, groupReleaseServing } from "../releases/group-repo.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { openEnv } from "../container-spec.js";
import { readEnvDoc, secretsPatchTo } from "../secrets/env.js";
import type { PodRow } from "../repo.js";
import type { PodsService } from "../service.js";
import type { PodPatch } from "../types.js";
import { groupById, membersOf, withGroupLock, type GroupRow, type GroupSpec } from "../groups/repo.js";
import { DEFAULT_DEADLINE_SECONDS, DEFAULT_STOP_GRACE_SECONDS } from "../checks/spec.js";
import { rollingGroupIds, setGroupRollout } from "./repo.js";
import { recordRolloutOutcome } from "./outcome-events.js";

/** A group's rollout as stored on its row (pod_groups.rollout). */
export interface GroupRollout {
  state: "rolling" | "done" | "rolling_back" | "rolled_back";
  reason: string | null;
  started_at: string;
  /** the spec before the change: where the group goes back to when a member's new release fails */
  previous_spec: GroupSpec | null;
}

export interface GroupRolloutDeps {
  db: Db;
  secrets: SecretBox;
  pods: PodsService;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const sortedEnv = (env: Record<string, string>) => Object.entries(env).sort(([a], [b]) => a.localeCompare(b));

/** Members per batch: each member's own rollout keeps its old replica serving, so max_unavailable only widens it. */
export const batchSize = (spec: GroupSpec) =>
  Math.max(1, (spec.deploy?.max_surge ?? 1) + (spec.deploy?.max_unavailable ?? 0));

function memberPatch(deps: GroupRolloutDeps, spec: GroupSpec): PodPatch {
  const doc = readEnvDoc(deps.secrets, spec.env_sealed);
  return {
    secret_env: doc.secret,
    image: spec.image,
    port: spec.port,
    command: spec.command,
    env: doc.plain,
    size: spec.size,
    checks: spec.checks ?? null,
    deploy: {
      stop_grace_seconds: spec.deploy?.stop_grace_seconds ?? DEFAULT_STOP_GRACE_SECONDS,
      deadline_seconds: spec.deploy?.deadline_seconds ?? DEFAULT_DEADLINE_SECONDS,
    },
  };
}

function upToDate(deps: GroupRolloutDeps, m: PodRow, want: PodPatch): boolean {
  return (
    m.image === want.image &&
    m.port === want.port &&
    same(m.command, want.command) &&
    m.size === want.size &&
    same(m.checks, want.checks) &&
    m.stop_grace_seconds === want.deploy!.stop_grace_seconds &&
    m.rollout_deadline_seconds === want.deploy!.deadline_seconds &&
    same(
      sortedEnv(openEnv(deps.secrets, m.env_sealed)),
      sortedEnv({ ...want.env!, ...(want.secret_env as Record<string, string>) }),
    )
  );
}

const rolling = (m: PodRow) => m.desired_state === "running" && m.serving_generation !== m.generation;

/** The principal a group's rollout changes members with: the group's owner as its creator, audited as the rollout. */
const rolloutPrincipal = (g: GroupRow): Principal =>
  systemPrincipal({
    accountId: g.account_id,
    owner: { kind: g.owner_kind, id: g.owner_id },
    email: "",
    displayName: "group rollout",
    audit: {
      action: "rollPodGroup",
      target: g.id,
      ip: "rollout",
      requestId: `rollout:${g.id}:${Date.now()}`,
      status: 200,
      written: false,
    },
  });

/**
 * One step of a group's rollout (issue 29), under the group's lock: members not on the group's spec are
 * changed (each a safe rollout of its own) at most a batch at a time, the next batch once the previous one
 * serves. A member whose new release was rolled back stops the rollout: the group's spec returns to the one
 * before, and the members already changed are rolled back the same way, a batch at a time. Everything is on
 * the group's row, so any process continues a rollout cut by a kill.
 */
export async function advanceGroupRollout(deps: GroupRolloutDeps, groupId: string): Promise<void> {
  await withGroupLock(deps.db, groupId, false, async () => {
    const g = (await groupById(deps.db, groupId)) as (GroupRow & { rollout: GroupRollout | null }) | null;
    const r = g?.rollout;
    if (!g || !r || g.desired_state !== "running" || (r.state !== "rolling" && r.state !== "rolling_back")) return;
    const members = await membersOf(deps.db, g.id);
    const failed = members.find((m) => {
      const rb = m.rollback as { at?: string; to_release?: number; reason?: string } | null;
      return rb?.at && rb.at >= r.started_at && rb.to_release === m.release;
    });
    if (r.state === "rolling" && failed && r.previous_spec) {
      const reason = `member ${failed.slug}: ${(failed.rollback as { reason: string }).reason}`;
      const back: GroupRollout = { state: "rolling_back", reason, started_at: r.started_at, previous_spec: null };
      await inTransaction(deps.db, async (tx) => {
        await setGroupRollout(tx, g.id, { ...back }, r.previous_spec);
        await groupReleaseRolledBack(tx, g.id, reason);
        await recordRolloutOutcome(
          tx,
          "rolled_back",
          { kind: g.owner_kind, id: g.owner_id },
          { kind: "pod_group", id: g.id },
          { name: g.name, release: g.release, reason },
        );
      });
      return;
    }
    const want = memberPatch(deps, g.spec);
    const outdated = members.filter((m) => !upToDate(deps, m, want));
    const inFlight = members.filter(rolling).length;
    if (!outdated.length && !inFlight) {
      const state = r.state === "rolling" ? "done" : "rolled_back";
      await inTransaction(deps.db, async (tx) => {
        await setGroupRollout(tx, g.id, { ...r, state, previous_spec: null });
        if (state === "done") {
          await groupReleaseServing(tx, g.id, g.release);
          await recordRolloutOutcome(
            tx,
            "succeeded",
            { kind: g.owner_kind, id: g.owner_id },
            { kind: "pod_group", id: g.id },
            { name: g.name, release: g.release },
          );
        }
      });
      return;
    }
    const p = rolloutPrincipal(g);
    for (const m of outdated.filter((m) => !rolling(m)).slice(0, Math.max(0, batchSize(g.spec) - inFlight)))
      await deps.pods.update(p, m.id, {
        ...want,
        secret_env: secretsPatchTo(deps.secrets, m.env_sealed, want.secret_env as Record<string, string>),
      });
  });
}

/** Every rolling group, a step each (run every few seconds by each worker process; the lock makes it one at a time). */
export async function advanceGroupRollouts(deps: GroupRolloutDeps): Promise<void> {
  for (const id of await rollingGroupIds(deps.db)) await advanceGroupRollout(deps, id);
}

/** Drives group rollouts every `everyMs` in a worker process (a pass still running is not doubled). */
export class GroupRolloutDriver {
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(
    private readonly deps: GroupRolloutDeps & { log: { warn: (o: object, m: string) => void } },
    private readonly everyMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = true;
      advanceGroupRollouts(this.deps)
        .catch((err) => this.deps.log.warn({ err }, "group rollout step failed; the next one retries"))
        .finally(() => (this.running = false));
    }, this.everyMs).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
