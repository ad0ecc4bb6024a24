/**
 * The visibility a site view shows (README.md here, "Visibility"): what the edge enforces and where it comes from.
 * An organization's site is decided by the organization's policy, asked through the kernel (kernel.all("edgeAccess"),
 * the same policy the edge asks); a site of an owner kind without a policy is public, by its own nature.
 */
import type { Queryable } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { VisibilityInForce } from "../edge/contract.js";
import type { SiteRow } from "./repo.js";

const PUBLIC: VisibilityInForce = { visibility: "public", source: "site", own: "public" };

export async function siteVisibility(q: Queryable, kernel: Kernel, site: SiteRow): Promise<VisibilityInForce> {
  const policy = kernel.all("edgeAccess").find((p) => p.ownerKind === site.owner_kind);
  if (!policy) return PUBLIC;
  return policy.explain(q, { kind: "site", id: site.id, owner: { kind: site.owner_kind, id: site.owner_id } });
}
