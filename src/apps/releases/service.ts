import { ApiError } from "../../http/errors.js";
import type { Principal } from "../../auth/principal.js";
import type { Db } from "../../store/db.js";
import type { PodsService } from "../service.js";
import type { PodRow } from "../repo.js";
import { listReleases, releaseByNumber, type ReleaseRow } from "./repo.js";

/**
 * Releases of a pod (issue 29): listed newest first; a rollback to one of them is a change like any other (a
 * new release "rollback to N" with that release's spec, admitted and rolled out safely).
 */
export function releasesService(deps: { db: Db; pods: PodsService }) {
  const { db, pods } = deps;

  async function list(p: Principal, ref: string): Promise<{ pod: PodRow; releases: ReleaseRow[] }> {
    const pod = await pods.get(p, ref);
    return { pod, releases: await listReleases(db, pod.id) };
  }

  async function rollback(p: Principal, ref: string, number: number): Promise<PodRow> {
    const pod = await pods.get(p, ref);
    if (pod.desired_state === "removed") throw new ApiError("not_found", "No such pod for this account.");
    const target = await releaseByNumber(db, pod.id, number);
    if (!target) throw new ApiError("not_found", `The pod has no release ${number}.`);
    if (number === pod.release)
      throw new ApiError("conflict", `The pod runs release ${number} already; there is nothing to roll back.`);
    return pods.update(
      p,
      pod.id,
      {
        image: target.image,
        port: target.port,
        command: target.command,
        // the release's whole env: its plain values, and its secrets (those added since are removed)
        env: pods.envOf(target as unknown as PodRow),
        secret_env: pods.secretsPatchTo(pod, target.env_sealed),
        size: target.size,
        checks: target.checks,
        deploy: { stop_grace_seconds: target.stop_grace_seconds, deadline_seconds: target.rollout_deadline_seconds },
      },
      { description: `rollback to release ${number}` },
    );
  }

  return { list, rollback };
}

export type ReleasesService = ReturnType<typeof releasesService>;
