/**
 * Partner children (README.md, "Children"): isolated identities the partner issues for its end users, their scoped
 * tokens, membership (department, tenant), monthly cap, and credit moved from the partner's wallet (child_prepaid).
 */
import type { Static } from "@sinclair/typebox";
import { isUuid, type Db, type Queryable } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import { accountOwner, type Owner } from "../../kernel/owner.js";
import type { Principal } from "../../auth/principal.js";
import type { TokenResolver } from "../../auth/token-resolver.js";
import { issueToken, listScopedKeys, revokeScopedKey } from "../../auth/api-keys.js";
import { auditedTransaction } from "../../audit/record.js";
import { recordEvent } from "../../events/public.js";
import { ApiError, found, notFound } from "../../http/errors.js";
import { keysetPage } from "../../http/keyset-page.js";
import { balance, findWalletOf, post, walletFor } from "../../billing/public.js";
import type { PartnerRow } from "../repo.js";
import { ceilingOf } from "../service.js";
import { assertOpaque } from "../schemas.js";
import { departmentExists } from "../departments/repo.js";
import { checkChildScopes, tokenExpiry } from "./scopes.js";
import * as repo from "./repo.js";
import type { ChildCreate, TokenRequest } from "./schemas.js";

export interface ChildrenDeps {
  db: Db;
  kernel: Pick<Kernel, "all">;
  tokens: Pick<TokenResolver, "announceRevocation">;
}

export type ChildInput = Static<typeof ChildCreate>;
export type TokenInput = Static<typeof TokenRequest>;

export const childOwner = (id: string): Owner => ({ kind: "partner_child", id });

async function checkDepartment(q: Queryable, partnerId: string, code: string | null | undefined): Promise<void> {
  if (code === null || code === undefined) return;
  if (!(await departmentExists(q, partnerId, code)))
    throw new ApiError(
      "unknown_department",
      `department_code "${code}" is not in the partner's chart; push it with PUT /v1/partner/departments first.`,
    );
}

export function childrenService({ db, kernel, tokens }: ChildrenDeps) {
  async function mint(q: Queryable, partner: PartnerRow, child: repo.ChildRow, t: TokenInput) {
    const scopes = checkChildScopes(t.scopes, ceilingOf(partner));
    return issueToken(q, {
      accountId: partner.account_id,
      owner: childOwner(child.id),
      kind: "scoped",
      name: t.name ?? `child ${child.external_ref}`.slice(0, 100),
      scopes,
      expiresAt: tokenExpiry(t.expires_in_days),
    });
  }

  /**
   * POST /v1/partner/users: a new child (created: true, with its first token once), or the live child that already
   * has this external_ref (created: false, nothing changed, no token: issue one with POST .../tokens).
   */
  async function create(p: Principal, partner: PartnerRow, input: ChildInput) {
    assertOpaque("external_ref", input.external_ref);
    assertOpaque("tenant_ref", input.tenant_ref);
    if (input.token) checkChildScopes(input.token.scopes, ceilingOf(partner));
    return auditedTransaction(db, p, async (tx) => {
      await checkDepartment(tx, partner.account_id, input.department_code);
      const { row, created } = await repo.insertOrFind(tx, {
        partner_id: partner.account_id,
        external_ref: input.external_ref,
        department_code: input.department_code ?? null,
        tenant_ref: input.tenant_ref ?? null,
        monthly_cap_krw: input.monthly_cap_krw ?? null,
      });
      if (!created) return { row, created, token: null };
      // the child's wallet now, in the mode's policy (postpaid children are billed to the partner afterwards)
      await walletFor(tx, childOwner(row.id), "KRW", {
        policy: partner.billing_mode === "partner_postpaid" ? "postpaid" : "prepaid",
      });
      const token = input.token ? await mint(tx, partner, row, input.token) : null;
      await recordEvent(tx, {
        type: "partner.child.created",
        owner: accountOwner(partner.account_id),
        resource: { kind: "partner_child", id: row.id },
        data: { external_ref: row.external_ref, department_code: row.department_code, tenant_ref: row.tenant_ref },
      });
      return { row, created, token };
    });
  }

  async function get(partner: PartnerRow, id: string): Promise<repo.ChildRow> {
    return found(await repo.findChild(db, partner.account_id, id), "child user");
  }

  async function update(
    p: Principal,
    partner: PartnerRow,
    id: string,
    patch: { department_code?: string | null; tenant_ref?: string | null; monthly_cap_krw?: number | null },
  ) {
    assertOpaque("tenant_ref", patch.tenant_ref);
    return auditedTransaction(db, p, async (tx) => {
      const cur = found(await repo.findChild(tx, partner.account_id, id, { forUpdate: true }), "child user");
      await checkDepartment(tx, partner.account_id, patch.department_code);
      return repo.updateChild(tx, cur.id, patch);
    });
  }

  async function list(partner: PartnerRow, page: { cursor?: string; limit?: number }) {
    const limit = page.limit ?? 50;
    // the cursor is the last child's id (the list is keyset-paged on its created_at, id)
    let after: string | null = null;
    if (page.cursor) {
      after = Buffer.from(page.cursor, "base64url").toString();
      if (!isUuid(after)) throw new ApiError("invalid_request", "cursor is not one this API gave.");
    }
    const rows = await repo.listChildren(db, partner.account_id, { after, limit: limit + 1 });
    return keysetPage(
      rows,
      limit,
      (r) => r,
      (r) => Buffer.from(r.id).toString("base64url"),
    );
  }

  /**
   * DELETE /v1/partner/users/{id}: the child's tokens are revoked at once on every API process (NOTIFY on commit);
   * its resources pass to the partner account (kernel.all("owned"), as organization assets return to their creators) and its
   * remaining balance back to the partner's wallet, so nothing stays running or paid for an identity nobody can use.
   */
  async function remove(p: Principal, partner: PartnerRow, id: string): Promise<void> {
    await auditedTransaction(db, p, async (tx) => {
      const child = found(await repo.findChild(tx, partner.account_id, id, { forUpdate: true }), "child user");
      const owner = childOwner(child.id);
      for (const key of await listScopedKeys(tx, { owner })) await revokeScopedKey(tx, tokens, { id: key.id, owner });
      const to = { owner: accountOwner(partner.account_id), accountId: partner.account_id };
      // a locked site stays with the child's identity, where the partner lock still applies: handed to the partner
      // account it would be public (access/README.md, "Deleted children")
      const locked = await repo.lockedSiteIds(tx, child.id);
      for (const source of kernel.all("owned")) {
        const ids = (await source.list(tx, owner))
          .filter((r) => !(source.kind === "site" && locked.has(r.id)))
          .map((r) => r.id);
        if (ids.length) await source.reassign(tx, ids, to);
      }
      const wallet = await findWalletOf(tx, owner, "KRW");
      const left = wallet ? await balance(tx, wallet.id) : 0;
      if (wallet && left > 0) {
        const back = await walletFor(tx, to.owner, "KRW");
        await post(tx, {
          currency: "KRW",
          source: { type: "transfer", id: child.id },
          idempotencyKey: `partner-child-close:${child.id}`,
          legs: [
            { walletId: wallet.id, amount: -left },
            { walletId: back.id, amount: left },
          ],
          memo: `balance of deleted partner child ${child.external_ref}`,
        });
      }
      await repo.markDeleted(tx, child.id);
      await recordEvent(tx, {
        type: "partner.child.deleted",
        owner: to.owner,
        resource: { kind: "partner_child", id: child.id },
        data: { external_ref: child.external_ref, balance_returned_krw: Math.max(0, left) },
      });
    });
  }

  async function issue(p: Principal, partner: PartnerRow, id: string, t: TokenInput) {
    return auditedTransaction(db, p, async (tx) => {
      const child = found(await repo.findChild(tx, partner.account_id, id), "child user");
      return mint(tx, partner, child, t);
    });
  }

  async function listTokens(partner: PartnerRow, id: string) {
    const child = await get(partner, id);
    return listScopedKeys(db, { owner: childOwner(child.id) });
  }

  async function revokeToken(p: Principal, partner: PartnerRow, id: string, tokenId: string): Promise<void> {
    await auditedTransaction(db, p, async (tx) => {
      const child = await repo.findChild(tx, partner.account_id, id);
      if (!child || !(await revokeScopedKey(tx, tokens, { id: tokenId, owner: childOwner(child.id) })))
        throw notFound("child token");
    });
  }

  /**
   * POST /v1/partner/users/{id}/credit (child_prepaid): moves amount_krw from the partner's wallet to the child's in
   * one ledger transaction. Its ledger key derives from the request's Idempotency-Key, so retries (parallel ones too)
   * move the money once and answer the same transaction; 402 insufficient_funds when the partner's wallet is short.
   */
  async function credit(p: Principal, partner: PartnerRow, id: string, amountKrw: number, requestKey: string) {
    if (partner.billing_mode !== "child_prepaid")
      throw new ApiError(
        "conflict",
        "Credit transfers are for child_prepaid partners; postpaid children are billed to the partner.",
      );
    return auditedTransaction(db, p, async (tx) => {
      const child = found(await repo.findChild(tx, partner.account_id, id), "child user");
      const from = await walletFor(tx, accountOwner(partner.account_id), "KRW");
      const to = await walletFor(tx, childOwner(child.id), "KRW");
      const { transaction, created } = await post(tx, {
        currency: "KRW",
        source: { type: "transfer", id: child.id },
        idempotencyKey: `partner-credit:${partner.account_id}:${child.id}:${requestKey}`,
        legs: [
          { walletId: from.id, amount: -amountKrw },
          { walletId: to.id, amount: amountKrw },
        ],
        memo: `partner credit to child ${child.external_ref}`,
      });
      return {
        transaction_id: transaction.id,
        amount_krw: amountKrw,
        replayed: !created,
        child_balance_krw: await balance(tx, to.id),
        partner_balance_krw: await balance(tx, from.id),
      };
    });
  }

  return { create, get, update, list, remove, issue, listTokens, revokeToken, credit };
}

export type ChildrenService = ReturnType<typeof childrenService>;
