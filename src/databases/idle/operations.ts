import type { Principal } from "../../auth/principal.js";
import type { DatabasesDeps, ServiceCore } from "../service-core.js";
import type * as repo from "../repo.js";
import { validateIdleStop } from "./validate.js";

/**
 * PATCH /v1/databases/{id} {idle_stop_seconds}: the scale-to-zero setting, kept in the store alone (the sweep and the
 * wake fronts read it). Its idle clock starts again now. Turned off (null) on an idle-stopped instance, it stays
 * stopped until its next connection or start, then runs for good.
 */
export function idleOperations(deps: Pick<DatabasesDeps, "idleMinSeconds">, core: ServiceCore) {
  const setIdleStop = (p: Principal, ref: string, seconds: number | null) =>
    core.update(p, ref, (row) => {
      core.requireLive(row);
      validateIdleStop(seconds, row.size, deps.idleMinSeconds ?? 60);
      return { idle_stop_seconds: seconds, awake_since: new Date() } as Partial<repo.DatabaseRow>;
    });
  return { setIdleStop };
}
