import type { Db } from "../store/db.js";
import { found } from "../http/errors.js";
import type { Principal } from "../auth/principal.js";
import type { RuntimeProvider } from "../runtime/provider.js";
import * as repo from "./repo.js";
import { containerName } from "./container-spec.js";

/**
 * The legacy deployment endpoints (deprecated): a "deployment" is one rollout of a pod (a generation). Metrics
 * are sampled from its container while it serves; otherwise they are null with the rollout's state.
 */
export function legacyService(deps: { db: Db; runtime: RuntimeProvider; hostId: string }) {
  async function find(p: Principal, ref: string) {
    const rollout = found(await repo.findRollout(deps.db, p.owner, ref), "deployment");
    const pod = (await repo.podById(deps.db, rollout.pod_id))!;
    return { rollout, pod };
  }

  /** the rollout's container if it runs on this host */
  async function container(pod: repo.PodRow, generation: number) {
    if (pod.host_id !== deps.hostId || (await deps.runtime.unavailable())) return null;
    const info = await deps.runtime.inspect(containerName(pod.id, generation));
    return info?.status === "running" ? info : null;
  }

  async function metrics(p: Principal, ref: string) {
    const { rollout, pod } = await find(p, ref);
    const c = await container(pod, rollout.generation);
    const stats = c ? await deps.runtime.stats(c.name) : null;
    return {
      deployment_id: rollout.id,
      pod_id: pod.id,
      generation: rollout.generation,
      image: rollout.image,
      state: rollout.state,
      restarts: rollout.restarts,
      cpu_percent: stats?.cpuPercent ?? null,
      memory_bytes: stats?.memoryBytes ?? null,
      memory_limit_bytes: stats?.memoryLimitBytes ?? null,
      sampled_at: new Date().toISOString(),
    };
  }

  async function sample(p: Principal, ref: string, lines = 20) {
    const { rollout, pod } = await find(p, ref);
    const c = await container(pod, rollout.generation);
    return {
      deployment_id: rollout.id,
      pod_id: pod.id,
      generation: rollout.generation,
      state: rollout.state,
      reason: rollout.reason,
      created_at: rollout.created_at.toISOString(),
      serving_at: rollout.serving_at?.toISOString() ?? null,
      log_lines: c ? await deps.runtime.logs(c.name, lines) : [],
    };
  }

  return { metrics, sample };
}

export type LegacyService = ReturnType<typeof legacyService>;
