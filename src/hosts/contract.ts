/** What the hosts area provides the others (capability "hosts"): this process's host, placement, host liveness. */
import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    hosts: Hosts;
  }
}

/**
 * What a process does: `api` serves HTTP, `worker` runs jobs and the providers whose files live on its
 * host (database servers, later pods, builds, volumes), `edge` and `s3` the gateways. ROLES picks a
 * subset; the default is all of them, so one process runs the whole platform.
 */
export const HOST_ROLES = ["api", "worker", "edge", "s3"] as const;
export type HostRole = (typeof HOST_ROLES)[number];

/** The machine a process runs on; the id is kept in DATA_DIR, so a restarted process is the same host. */
export interface HostIdentity {
  id: string;
  name: string;
  roles: HostRole[];
}

/** What a creation path tells placement about the resource it is about to create. */
export interface PlacementRequest {
  /** e.g. "database", "pod", "volume", "build", "bucket" */
  kind: string;
  owner?: Owner;
  size?: string;
  /** needs a GPU host (pods) */
  gpu?: boolean;
  /** an organization's external host asked for by id (pods in the company context; src/orgs/hosts) */
  hostId?: string;
  /** or any of the organization's online external hosts carrying all these labels */
  hostLabels?: Record<string, string>;
}

/**
 * Hosts as the kernel sees them (implemented by src/hosts): which host this process is, where a new
 * resource goes, and whether a host is alive. Areas record the placed host id on their resource and
 * send its provider work to that host's queue (JobDefinition.perHost).
 */
export interface Hosts {
  readonly local: HostIdentity;
  /** This process's lease (held from start until it stops or dies); null before start. */
  leaseId(): string | null;
  /** The host that will hold a new resource: the local host by default. Refuses with 503 host_unavailable when none can. */
  place(q: Queryable, request: PlacementRequest): Promise<string>;
  /** Whether the host has sent a heartbeat recently enough (HOST_HEARTBEAT_SECONDS × HOST_MISSED_BEATS). */
  available(q: Queryable, hostId: string): Promise<boolean>;
}
