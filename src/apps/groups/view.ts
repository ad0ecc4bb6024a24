import type { GroupRollout } from "../rollout/groups.js";
import type { GroupWithMembers } from "./service.js";
import type { PodRow } from "../repo.js";
import type { SecretMeta } from "../secrets/env.js";
import { appUrl, runView } from "../view.js";

export type GroupState = "creating" | "running" | "stopped" | "idle_stopped" | "failed" | "removed";

/**
 * running once a member serves; stopped when billing holds every member; idle_stopped while scale-to-zero holds
 * it (until its members run again after a wake); failed when every one failed
 */
export function groupState(desired: string, members: PodRow[]): GroupState {
  if (desired === "removed") return "removed";
  if (desired === "idle_stopped") return "idle_stopped";
  if (members.some((m) => m.state === "running")) return "running";
  if (members.length && members.every((m) => m.desired_state === "stopped")) return "stopped";
  if (members.length && members.every((m) => m.state === "failed")) return "failed";
  return "creating";
}

/** The public shape of a pod group; env is shown to its owner, like a pod's. */
export function groupView(
  { group: g, members }: GroupWithMembers,
  env: Record<string, string>,
  urls: { appsDomain: string; edgePort: number },
  secretEnv: Record<string, SecretMeta> = {},
) {
  return {
    ...runView(g, g.spec),
    checks: g.spec.checks ?? null,
    deploy: g.spec.deploy ?? {},
    rollout: rolloutView((g as { rollout?: GroupRollout | null }).rollout ?? null),
    env,
    secret_env: secretEnv,
    size: g.spec.size,
    databases: g.spec.databases,
    replica_min: g.replica_min,
    replica_max: g.replica_max,
    target_cpu_percent: g.target_cpu_percent,
    desired_replicas: g.desired_state === "removed" ? 0 : g.desired_replicas,
    replicas: members.map((m) => ({
      id: m.id,
      slug: m.slug,
      state: m.state,
      address: m.state === "running" ? m.address : null,
      host_id: m.host_id,
    })),
    state: groupState(g.desired_state, members),
    scale_hold: g.scale_hold,
    idle_stop_seconds: g.idle_stop_seconds ?? null,
    release: g.release,
    url: appUrl(g.slug, urls),
    created_at: g.created_at.toISOString(),
  };
}

const rolloutView = (r: GroupRollout | null) => r && { state: r.state, reason: r.reason, started_at: r.started_at };
