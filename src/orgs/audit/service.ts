/**
 * Organization API keys and the organization audit log (README.md, "API keys and audit"). Keys are scoped tokens
 * owned by the organization (owner_kind 'org') and issued by an admin (account_id): what they create is a company
 * asset and every request they make is an audit row of the organization. Issuing, listing and revoking are the
 * shared key machinery of src/auth/api-keys.ts, which personal keys use too.
 */
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { TokenResolver } from "../../auth/token-resolver.js";
import { issueScopedKey, listScopedKeys, revokeScopedKey, type KeyRequest } from "../../auth/api-keys.js";
import type { OrgMembership } from "../public.js";
import type { Owner } from "../../kernel/owner.js";
import { auditedTransaction } from "../../audit/record.js";
import { listOwnerAudit, type OwnerAuditQuery } from "../../audit/service.js";
import { ApiError } from "../../http/errors.js";

export interface OrgAuditDeps {
  db: Db;
  tokens: Pick<TokenResolver, "announceRevocation">;
}

const orgOwner = (m: OrgMembership): Owner => ({ kind: "org", id: m.orgId });

export function orgAuditService(d: OrgAuditDeps) {
  const { db } = d;
  return {
    /** every live key of the organization, whoever issued it */
    listKeys: (m: OrgMembership) => listScopedKeys(db, { owner: orgOwner(m) }),

    /** a key acting for the organization as the issuing admin (role at most admin, while they are a member) */
    issueKey: (p: Principal, m: OrgMembership, input: KeyRequest) =>
      auditedTransaction(db, p, async (tx) => {
        const issued = await issueScopedKey(tx, { accountId: p.accountId, owner: orgOwner(m) }, input);
        return { ...issued, issuerEmail: p.account.email };
      }),

    /** any admin revokes any of the organization's keys; every API process refuses it at once */
    revokeKey: (p: Principal, m: OrgMembership, id: string) =>
      auditedTransaction(db, p, async (tx) => {
        if (!(await revokeScopedKey(tx, d.tokens, { id, owner: orgOwner(m) })))
          throw new ApiError("not_found", "No such API key in this organization.");
      }),

    audit: (m: OrgMembership, query: OwnerAuditQuery) => listOwnerAudit(db, orgOwner(m), query),
  };
}

export type OrgAuditService = ReturnType<typeof orgAuditService>;
