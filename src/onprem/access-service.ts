/** Access inquiries (the caller's and the operator's side) and the terms. */
import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import { isUniqueViolation, type Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { OnpremConfig } from "./config.js";
import { actingFor, type Scope } from "./acting.js";
import * as repo from "./repo/access.js";

export interface AccessDeps {
  db: Db;
  kernel: Kernel;
  config: OnpremConfig;
}

export type AccessStatus = "none" | "pending" | "approved" | "rejected";

export function accessService(deps: AccessDeps) {
  const { db, config } = deps;

  /** Approved once any inquiry was approved; otherwise the newest inquiry's state. */
  async function status(p: Principal, scope: Scope) {
    const acting = await actingFor(deps, p, scope, "member");
    const inquiries = await repo.accessRequestsOf(db, acting.owner);
    const approved = inquiries.find((r) => r.status === "approved") ?? null;
    const pending = inquiries.find((r) => r.status === "pending") ?? null;
    const newest = inquiries[0] ?? null;
    const state: AccessStatus = approved ? "approved" : (newest?.status ?? "none");
    const rejected = !approved ? (inquiries.find((r) => r.status === "rejected") ?? null) : null;
    return { scope, owner: acting.owner, status: state, approved, pending, rejected };
  }

  async function request(p: Principal, input: { scope: Scope; company: string; contact: string; message?: string }) {
    const acting = await actingFor(deps, p, input.scope, "admin");
    if (await repo.isApproved(db, acting.owner))
      throw new ApiError("conflict", "On-premises access is already approved for this owner.");
    try {
      return await auditedTransaction(db, acting.principal, (tx) =>
        repo.insertAccessRequest(tx, {
          id: randomUUID(),
          owner: acting.owner,
          account_id: p.accountId,
          requester_email: p.account.email,
          company: input.company,
          contact: input.contact,
          message: input.message ?? "",
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err, "onprem_access_one_pending"))
        throw new ApiError("conflict", "An inquiry of this owner is already waiting for the operator.");
      throw err;
    }
  }

  const list = (status: repo.AccessRow["status"] | null, limit: number) => repo.listAccessRequests(db, status, limit);

  /** The operator decides a pending inquiry once; a decided one is 409 conflict. */
  async function decide(id: string, decision: "approved" | "rejected", note: string | null) {
    return auditedTransaction(db, null, async (tx) => {
      const row = await repo.lockAccessRequest(tx, id);
      if (!row) throw new ApiError("not_found", "No such access inquiry.");
      if (row.status !== "pending") throw new ApiError("conflict", `The inquiry was already ${row.status}.`);
      return repo.decideAccessRequest(tx, id, decision, note);
    });
  }

  async function terms(p: Principal) {
    const at = await repo.acceptedAt(db, p.accountId, config.termsVersion);
    return { version: config.termsVersion, url: config.termsUrl, accepted: at !== null, accepted_at: at };
  }

  /** Only the current version can be accepted; accepting it again changes nothing. */
  async function acceptTerms(p: Principal, version: string) {
    if (version !== config.termsVersion)
      throw new ApiError(
        "invalid_request",
        `Only the current terms version ${config.termsVersion} can be accepted (got ${version}).`,
      );
    await auditedTransaction(db, p, (tx) => repo.acceptTerms(tx, p.accountId, version));
    return terms(p);
  }

  return { status, request, list, decide, terms, acceptTerms };
}

export type AccessService = ReturnType<typeof accessService>;
