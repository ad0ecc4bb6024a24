import type { EdgeRouteSource } from "../kernel/area.js";
import { edgeTargetRows } from "./edge-repo.js";

/**
 * What the edge serves of apps: <slug>.<APPS_DOMAIN> is a pod (its serving replica) or a pod group (its running
 * members, round robin). Pods are public; routes change on NOTIFY pod_routes (migration 013's trigger).
 */
export function podEdgeRoutes(): EdgeRouteSource {
  return {
    channel: "pod_routes",
    resolve: async (q, slug) => {
      const row = await edgeTargetRows(q, slug);
      return (
        row && {
          kind: row.kind,
          id: row.id,
          owner: { kind: row.owner_kind, id: row.owner_id },
          accountId: row.account_id,
          upstreams: row.addresses,
          visibility: "public",
          ...(row.idle && { idle: row.idle }),
        }
      );
    },
  };
}
