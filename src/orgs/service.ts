import { randomUUID } from "node:crypto";
import type { Db } from "../store/db.js";
import type { Principal } from "../auth/principal.js";
import type { OrgMembership } from "./contract.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import * as repo from "./repo.js";
import { removeFromOrg, returnAssetsToCreators, revokeOrgKeys, type ChangeDeps } from "./membership-changes.js";

export interface OrgsDeps extends ChangeDeps {
  db: Db;
}

const alreadyMember = () =>
  new ApiError("conflict", "The account is already in an organization; leave it first (one organization at a time).");

/** Organizations themselves: create, read, settings, delete, leave (members, departments ... in their folders). */
export function orgsService(d: OrgsDeps) {
  const { db } = d;

  async function orgOrGone(id: string): Promise<repo.OrgRow> {
    const org = await repo.findOrg(db, id);
    if (!org) throw new ApiError("not_found", "The organization no longer exists.");
    return org;
  }

  return {
    async get(m: OrgMembership) {
      const org = await orgOrGone(m.orgId);
      return { org, role: m.role, memberCount: await repo.countMembers(db, org.id) };
    },

    async create(p: Principal, body: { name: string }) {
      if (p.owner.kind !== "account")
        throw new ApiError("forbidden_role", "Only a personal account creates an organization.");
      return auditedTransaction(db, p, async (tx) => {
        // the unique account_id of org_members decides races between two creations or a creation and an acceptance
        await repo.lockAccountMembership(tx, p.accountId);
        if (await repo.membership(tx, p.accountId)) throw alreadyMember();
        const org = await repo.insertOrg(tx, { id: randomUUID(), name: body.name, ownerAccountId: p.accountId });
        await repo.addMember(tx, { orgId: org.id, accountId: p.accountId, role: "owner", departmentId: null });
        return { org, role: "owner" as const, memberCount: 1 };
      });
    },

    async update(p: Principal, m: OrgMembership, s: repo.OrgSettings) {
      if (s.billing_mode !== undefined && m.role !== "owner")
        throw new ApiError("forbidden_role", "Only the owner changes billing_mode.");
      return auditedTransaction(db, p, async (tx) => {
        const current = await repo.findOrg(tx, m.orgId, true);
        if (!current) throw new ApiError("not_found", "The organization no longer exists.");
        if (s.billing_mode !== undefined && s.billing_mode !== current.billing_mode && current.billing_mode === "card")
          throw new ApiError(
            "conflict",
            "The organization pays by card: DELETE /v1/org/billing/card ends card billing.",
          );
        const next = { ...current, ...Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) };
        if (repo.visibilityRank(next.default_visibility) > repo.visibilityRank(next.max_visibility))
          throw new ApiError(
            "invalid_request",
            `default_visibility ${next.default_visibility} is wider than max_visibility ${next.max_visibility}.`,
          );
        const org = await repo.updateOrg(tx, m.orgId, s);
        return { org, role: m.role, memberCount: await repo.countMembers(tx, org.id) };
      });
    },

    /** Owner only: every member leaves, company assets return to their creators, organization keys are revoked. */
    async remove(p: Principal, confirm: string) {
      return auditedTransaction(db, p, async (tx) => {
        const m = await repo.membership(tx, p.accountId);
        if (!m) throw new ApiError("not_found", "The caller is not a member of an organization.");
        if (m.role !== "owner") throw new ApiError("forbidden_role", "Only the owner deletes the organization.");
        const org = await repo.findOrg(tx, m.orgId, true);
        if (!org) throw new ApiError("not_found", "The organization no longer exists.");
        if (confirm !== org.name)
          throw new ApiError("invalid_request", "confirm must be the organization's name, exactly.");
        if (org.billing_mode === "card")
          throw new ApiError(
            "conflict",
            "The organization pays by card: remove it first (DELETE /v1/org/billing/card).",
          );
        const members = await repo.memberIds(tx, org.id);
        const returned = await returnAssetsToCreators(tx, d.kernel, org.id);
        await revokeOrgKeys(tx, d.tokens, org.id);
        await repo.deleteOrg(tx, org.id);
        for (const accountId of members) await d.tokens.announceAccountChange(tx, accountId);
        return { deleted: true, members_removed: members.length, assets_returned: returned };
      });
    },

    /** The caller leaves; the owner cannot (409): transfer ownership or delete the organization instead. */
    async leave(p: Principal) {
      return auditedTransaction(db, p, async (tx) => {
        const m = await repo.membership(tx, p.accountId);
        if (!m) throw new ApiError("not_found", "The caller is not a member of an organization.");
        if (m.role === "owner")
          throw new ApiError(
            "conflict",
            "The owner cannot leave the organization; delete it (DELETE /v1/org) instead.",
          );
        const org = await repo.findOrg(tx, m.orgId, true);
        if (!org) throw new ApiError("not_found", "The organization no longer exists.");
        return { left: true, ...(await removeFromOrg(tx, d, org, p.accountId)) };
      });
    },

    async members(m: OrgMembership) {
      return repo.listMembers(db, m.orgId);
    },
  };
}

export type OrgsService = ReturnType<typeof orgsService>;
