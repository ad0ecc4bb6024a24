/**
 * What the organizations area provides the others: membership and roles (capability "orgs"), placement on
 * organizations' own machines ("externalHosts"), and the point where every area offers its resources for company
 * assets and ownership moves ("owned", read by organizations and partners). Whose wallet pays and who may change a
 * company asset it tells the kernel as the owner policy of kind "org" (kernel/contracts.ts, OwnerPolicy).
 */
import type { Queryable } from "../store/db.js";
import type { PlacementRequest } from "../hosts/contract.js";
import type { OwnedResources } from "../kernel/contracts.js";

/** owned resources are the kernel's (kernel/owned-repo.ts implements them over one table); the point is "owned" */
export type { OwnedResource, OwnedResources } from "../kernel/contracts.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    /** without it every owner is a personal account or a partner child */
    orgs: OrgDirectory;
    externalHosts: ExternalHosts;
  }
  interface Contributions {
    /** one per kind */
    owned: OwnedResources;
  }
}

export type OrgRole = "owner" | "admin" | "member";

const RANK: Record<OrgRole, number> = { member: 1, admin: 2, owner: 3 };

/** True when `role` is at least `needed` (owner > admin > member). */
export const roleAtLeast = (role: OrgRole, needed: OrgRole): boolean => RANK[role] >= RANK[needed];

export interface OrgMembership {
  orgId: string;
  role: OrgRole;
  departmentId: string | null;
}

/** The organizations area's answers for the rest of the platform (kernel capability "orgs"). */
export interface OrgDirectory {
  /** the account's organization and role, or null (one organization per account at a time) */
  membership(q: Queryable, accountId: string): Promise<OrgMembership | null>;
  /** true when `role` is at least `needed` (owner > admin > member) */
  roleAtLeast(role: OrgRole, needed: OrgRole): boolean;
}

/**
 * Organization external hosts (bring your own machine, src/orgs/hosts): machines that run the host agent
 * (src/agent) and talk to the control plane over HTTPS with their own credential, never the store's. Pods
 * placed there are reconciled by the agent, not by a worker process, so no per-host job is sent to them.
 */
export interface ExternalHosts {
  /** the external host for a request naming hostId or hostLabels: 404 for another owner's, 503 host_unavailable when not online */
  place(q: Queryable, request: PlacementRequest): Promise<string>;
  /** whether the host id is an external host (its pods are driven by its agent) */
  isExternal(q: Queryable, hostId: string): Promise<boolean>;
}
