import { createHash } from "node:crypto";
import { inTransaction, type Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import { ownerKey, type Owner } from "../kernel/owner.js";
import type { SecretBox } from "../kernel/secrets.js";
import { ownerNetworkName } from "../runtime/index.js";
import type { ContainerSpec } from "../runtime/provider.js";
import type { DesiredPod, PodReport } from "../agent/protocol.js";
import * as repo from "./repo.js";
import { containerName, LABEL_GENERATION, LABEL_HOST, LABEL_POD, openEnv } from "./container-spec.js";
import { limitsOf, podSizes } from "./sizes.js";

/**
 * The apps side of organization external hosts (src/orgs/hosts, src/agent): pods placed on such a host are not
 * reconciled by a worker process but by the host's agent, which never reads the store. This turns the host's pod
 * rows into the desired state the agent receives, and the agent's reports back into the rows (the same columns the
 * local reconciler writes, with the same generation guard). Volumes and databases are refused at placement.
 */
export interface AgentFeedDeps {
  db: Db;
  secrets: SecretBox;
  kernel: Pick<Kernel, "use">;
  gpuCatalogFile: string;
}

export function agentFeed(deps: AgentFeedDeps) {
  async function specOf(pod: repo.PodRow, hostId: string): Promise<ContainerSpec> {
    const owner: Owner = { kind: pod.owner_kind, id: pod.owner_id };
    const size = podSizes(deps.gpuCatalogFile).find((s) => s.id === pod.size);
    return {
      name: containerName(pod.id, pod.generation),
      image: pod.image,
      command: pod.command,
      env: openEnv(deps.secrets, pod.env_sealed),
      port: pod.port,
      limits: size ? limitsOf(size) : { cpus: 0.25, memoryMb: 256, pids: 512, gpu: null },
      // the agent creates the owner's isolated network on its machine under the same name
      network: ownerNetworkName(owner),
      mounts: [],
      labels: {
        [LABEL_POD]: pod.id,
        [LABEL_GENERATION]: String(pod.generation),
        [LABEL_HOST]: hostId,
        "platform.owner": ownerKey(owner),
      },
      pullAuth: await (deps.kernel.use("imageAccess")?.pullFor(owner, pod.image) ?? Promise.resolve(null)).catch(
        () => null,
      ),
    };
  }

  /** What the host's agent must run now, and a version that changes with it. */
  async function desired(hostId: string): Promise<{ version: string; pods: DesiredPod[] }> {
    const rows = await repo.podsOnHost(deps.db, hostId);
    rows.sort((a, b) => a.id.localeCompare(b.id));
    const pods: DesiredPod[] = [];
    for (const pod of rows)
      pods.push({
        pod_id: pod.id,
        generation: pod.generation,
        // the agent knows stopped; stopped for idleness is stopped to it (the platform wakes the pod)
        desired_state: pod.desired_state === "idle_stopped" ? "stopped" : pod.desired_state,
        spec: pod.desired_state === "running" ? await specOf(pod, hostId) : null,
      });
    // sealed env and pull credentials change with the generation: the ids, generations and states say it all
    const version = createHash("sha256")
      .update(JSON.stringify(pods.map((p) => [p.pod_id, p.generation, p.desired_state])))
      .digest("base64url")
      .slice(0, 22);
    return { version, pods };
  }

  /**
   * The agent's observations, written only where the row is still what the agent worked on (same host, generation
   * and desired state): a change made meanwhile wins, and the agent receives it with the next desired state.
   */
  async function report(hostId: string, reports: PodReport[]): Promise<number> {
    let written = 0;
    for (const r of reports) {
      const pod = await repo.podById(deps.db, r.pod_id);
      if (!pod || pod.host_id !== hostId) continue;
      const idle = r.desired_state === "stopped" && pod.desired_state === "idle_stopped";
      const seen = { id: pod.id, generation: r.generation, desired_state: idle ? pod.desired_state : r.desired_state };
      const serving = r.state === "running" && r.serving_generation !== null;
      // the pod's state and its rollout's in one transaction, as the local reconciler writes them
      const ok = await inTransaction(deps.db, async (tx) => {
        const current = await repo.recordObserved(tx, seen, {
          state: r.state,
          state_reason: r.reason,
          address: serving ? r.address : null,
          network_address: null,
          serving_generation: serving ? r.serving_generation : null,
          restart_count: Math.max(pod.restart_count, r.restart_count),
        });
        if (!current) return false;
        if (serving && r.serving_generation === r.generation) await repo.rolloutServing(tx, pod.id, r.generation);
        if (r.state === "failed") await repo.rolloutCrashed(tx, pod.id, r.generation, true);
        return true;
      });
      if (ok) written++;
    }
    return written;
  }

  return {
    desired,
    report,
    /** live pods (not deleted) and active ones (meant to run) per host */
    counts: (hostIds: string[]) => repo.podCountsOnHosts(deps.db, hostIds),
    /**
     * The agent stopped beating: its pods' containers may still run, but nobody can tell, and the edge cannot count
     * on their address. They show `unknown` (not served) until the agent reports again.
     */
    markUnknown: (hostId: string, reason: string) => repo.markPodsUnknown(deps.db, hostId, reason),
  };
}

export type AgentFeed = ReturnType<typeof agentFeed>;
