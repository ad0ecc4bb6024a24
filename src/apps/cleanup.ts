import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../store/db.js";
import type { ContainerInfo, RuntimeProvider } from "../runtime/provider.js";
import { LABEL_GENERATION } from "./container-spec.js";
import { countCleanedContainers } from "./lifecycle-repo.js";

/**
 * The reconciler owns every container it ever started (issue 33): a container it finds that the pod should not
 * have is removed, counted on the pod (`cleaned_containers`) and logged. Such containers come from a rollout cut
 * by a kill (an older generation never removed, a new one created but not started), a removal cut half-way
 * (podman's `removing` state), or a pod deleted while its removal could not finish.
 */
export interface CleanupDeps {
  db: Queryable;
  runtime: RuntimeProvider;
  log: FastifyBaseLogger;
}

/** Names of pod containers (containerName in container-spec.ts): the only ones whose stray processes are reaped. */
export const POD_CONTAINER_NAME = /^pod-[0-9a-f]{16}-g\d+$/;

export const generationOf = (c: ContainerInfo) => Number(c.labels[LABEL_GENERATION] ?? 0);

/** Not a container to keep or adopt: a removal cut half-way, a start cut before it ran, one podman cannot read. */
export const unfinished = (c: ContainerInfo) =>
  c.status === "removing" || c.status === "created" || c.status === "unknown";

/** Stops and removes one container; false (logged) when it could not be removed: the next sweep tries again. */
export async function removeContainer(deps: CleanupDeps, c: ContainerInfo): Promise<boolean> {
  if (c.status === "running") await deps.runtime.stop(c.name, 5).catch(() => {});
  try {
    await deps.runtime.remove(c.name);
    return true;
  } catch (err) {
    deps.log.error({ err, container: c.name, status: c.status }, "container could not be removed; the sweep retries");
    return false;
  }
}

/** Removes containers the pod must not have; counts them on its row and logs them. Returns how many went. */
export async function cleanUp(
  deps: CleanupDeps,
  podId: string,
  containers: ContainerInfo[],
  why: string,
): Promise<{ removed: number; left: number }> {
  const removed: ContainerInfo[] = [];
  for (const c of containers) if (await removeContainer(deps, c)) removed.push(c);
  if (removed.length) {
    await countCleanedContainers(deps.db, podId, removed.length);
    deps.log.warn(
      {
        pod: podId,
        why,
        containers: removed.map((c) => ({ name: c.name, generation: generationOf(c), status: c.status })),
      },
      "pod containers cleaned up",
    );
  }
  return { removed: removed.length, left: containers.length - removed.length };
}
