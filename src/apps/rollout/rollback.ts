import { inTransaction } from "../../store/db.js";
import type { ContainerInfo, RuntimeProvider } from "../../runtime/provider.js";
import * as repo from "../repo.js";
import * as releases from "../releases/repo.js";
import type { Db } from "../../store/db.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { maskPodSecrets } from "../secrets/env.js";
import { recordRolloutOutcome } from "./outcome-events.js";

/**
 * Automatic rollback (issue 29): the wanted generation runs a new release that crashed, failed its startup
 * check or was not ready within the pod's rollout deadline, while an older generation of another release still
 * serves. The pod returns to the serving release's spec as a new generation: the serving replica keeps every
 * request until that one is ready (a rollback is a rollout like any other), the failed release is marked
 * `rolled_back` with the reason, and the pod's `rollback` says why with the failed replica's last log lines.
 * Returns false when there is nothing to return to (a first deploy, or a rollback that itself failed): then the
 * usual crash handling (restart with back-off) goes on.
 */
export async function rollBack(
  deps: { db: Db; runtime: RuntimeProvider; secrets?: SecretBox },
  pod: repo.PodRow,
  failed: ContainerInfo | null,
  reason: string,
): Promise<boolean> {
  if (pod.serving_generation === null || pod.serving_generation === pod.generation) return false;
  const serving = await releases.rolloutOf(deps.db, pod.id, pod.serving_generation);
  if (!serving?.release || serving.release === pod.release) return false;
  // the failed release's secrets are masked (pod.env_sealed is still that release's env here)
  const logLines = (failed ? await deps.runtime.logs(failed.name, 10).catch(() => [] as string[]) : []).map((l) =>
    maskPodSecrets(deps.secrets, pod.env_sealed, l),
  );
  return inTransaction(deps.db, async (tx) => {
    const target = await releases.releaseByNumber(tx, pod.id, serving.release!);
    if (!target) return false;
    const restored = await releases.restoreRelease(
      tx,
      pod.id,
      pod.generation,
      target,
      {
        from_release: pod.release,
        to_release: target.number,
        reason,
        log_lines: logLines,
        at: new Date().toISOString(),
      },
      `release ${pod.release} rolled back to ${target.number}: ${reason}`,
    );
    if (!restored) return false; // changed meanwhile: the newer change wins
    await releases.endRelease(tx, pod.id, pod.release, "rolled_back", reason);
    await repo.podEvent(tx, pod.id, "pod.rollout.rolled_back", {
      from_release: pod.release,
      to_release: target.number,
      reason,
    });
    await repo.rolloutCrashed(tx, pod.id, pod.generation, true);
    await repo.recordRollout(tx, restored, "rollback");
    // a group's member: the group's rollout tells (src/apps/rollout/groups.ts)
    if (!pod.group_id)
      await recordRolloutOutcome(
        tx,
        "rolled_back",
        { kind: pod.owner_kind, id: pod.owner_id },
        { kind: "pod", id: pod.id },
        { name: pod.name, from_release: pod.release, to_release: target.number, reason },
      );
    return true;
  });
}
