/**
 * Who a request acts for: `scope` "me" is the caller's own account, "org" the caller's organization (README:
 * src/onprem/README.md, "Owners"). Reads of an organization's records need membership; changes that commit it
 * (access inquiry, trial, order, confirm) need the role admin or owner. Not a member: 404 not_found, as the
 * organization routes answer; below the role: 403 forbidden_role. The X-Owner header plays no part here.
 */
import type { Principal } from "../auth/principal.js";
import { ApiError } from "../http/errors.js";
import type { Kernel } from "../kernel/kernel.js";
import type { OrgRole } from "../orgs/contract.js";
import { accountOwner, type Owner } from "../kernel/owner.js";
import type { Queryable } from "../store/db.js";
import * as repo from "./repo/access.js";

export type Scope = "me" | "org";

export interface Acting {
  scope: Scope;
  owner: Owner;
  /** the caller acting for that owner: the audit row of the request is the owner's */
  principal: Principal;
}

export interface ActingDeps {
  db: Queryable;
  kernel: Kernel;
}

async function membership(deps: ActingDeps, accountId: string) {
  return deps.kernel.use("orgs")?.membership(deps.db, accountId) ?? null;
}

export async function actingFor(deps: ActingDeps, p: Principal, scope: Scope, needed: OrgRole): Promise<Acting> {
  if (scope === "me") {
    const owner = accountOwner(p.accountId);
    return { scope, owner, principal: { ...p, owner } };
  }
  const m = await membership(deps, p.accountId);
  if (!m) throw new ApiError("not_found", "The caller is not a member of an organization (scope org).");
  if (!deps.kernel.require("orgs").roleAtLeast(m.role, needed))
    throw new ApiError("forbidden_role", `This needs the organization role ${needed}; the caller is ${m.role}.`);
  const owner: Owner = { kind: "org", id: m.orgId };
  return { scope, owner, principal: { ...p, owner } };
}

/** The owners whose records the caller may read: the account, and its organization if any. */
export async function visibleOwners(deps: ActingDeps, p: Principal): Promise<Owner[]> {
  const m = await membership(deps, p.accountId);
  return [accountOwner(p.accountId), ...(m ? [{ kind: "org" as const, id: m.orgId }] : [])];
}

/**
 * The caller acting for the owner of an existing record (an order, a license), or 404 when it is not theirs (another
 * organization's ids are not found) and 403 forbidden_role below the role needed.
 */
export async function actingForOwnerOf(
  deps: ActingDeps,
  p: Principal,
  owner: { owner_kind: "account" | "org"; owner_id: string },
  needed: OrgRole,
  what: string,
): Promise<Acting> {
  if (owner.owner_kind === "account") {
    if (owner.owner_id !== p.accountId) throw new ApiError("not_found", `No such ${what} for this account.`);
    return actingFor(deps, p, "me", needed);
  }
  const m = await membership(deps, p.accountId);
  if (!m || m.orgId !== owner.owner_id) throw new ApiError("not_found", `No such ${what} for this account.`);
  return actingFor(deps, p, "org", needed);
}

/** Download, trial and purchase need the owner's approved access, then the caller's acceptance of the current terms. */
export async function requireAccessAndTerms(q: Queryable, acting: Acting, termsVersion: string): Promise<void> {
  if (!(await repo.isApproved(q, acting.owner)))
    throw new ApiError(
      "onprem_approval_required",
      `On-premises access for ${acting.scope === "org" ? "the organization" : "this account"} is not approved yet: send POST /v1/onprem/access/request and wait for the operator.`,
    );
  if (!(await repo.acceptedAt(q, acting.principal.accountId, termsVersion)))
    throw new ApiError(
      "terms_required",
      `Accept the current on-premises terms (version ${termsVersion}) first: POST /v1/onprem/terms/accept.`,
    );
}
