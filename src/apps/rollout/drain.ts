import type { ContainerInfo } from "../../runtime/provider.js";
import { removeContainer, type CleanupDeps } from "../cleanup.js";
import type { PodRow } from "../repo.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * How long in-flight requests may still run on an old replica. The edge closes idle keep-alive connections
 * after 4 s (src/edge/upstream.ts), so an idle replica is down to none within that; a request running longer
 * than this bound is cut by the stop that follows (the edge's own upstream timeout is 120 s).
 */
const INFLIGHT_MAX_MS = 120_000;

/**
 * Graceful drain of replicas the pod no longer routes to (issue 29). The edge stops sending them new requests
 * first (the switch was written and NOTIFYed; `drainMs` lets every edge process follow it), then each one's
 * open connections are waited for until none is left (requests in flight finish), then SIGTERM,
 * `stop_grace_seconds`, SIGKILL, and the container goes.
 */
export async function drainReplicas(
  deps: CleanupDeps & { drainMs: number },
  pod: PodRow,
  replicas: ContainerInfo[],
): Promise<void> {
  const running = replicas.filter((c) => c.status === "running");
  if (running.length) await sleep(deps.drainMs);
  await Promise.all(
    replicas.map(async (c) => {
      if (c.status === "running" && pod.port && deps.runtime.connections) {
        const until = Date.now() + INFLIGHT_MAX_MS;
        while (Date.now() < until && ((await deps.runtime.connections(c.name, pod.port).catch(() => null)) ?? 0) > 0)
          await sleep(200);
      }
      if (c.status === "running") await deps.runtime.stop(c.name, pod.stop_grace_seconds ?? 10).catch(() => {});
      await removeContainer(deps, c);
    }),
  );
}
