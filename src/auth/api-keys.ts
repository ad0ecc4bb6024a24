/**
 * Tokens as rows, and scoped API keys: what issuing, listing and revoking keys shares between personal keys
 * (/v1/api-keys, accounts area) and organization keys (/v1/org/api-keys, orgs area). A key belongs to an owner
 * (owner_kind, owner_id: whose resources it works on) and was issued by an account (account_id: who acts with it).
 * Personal keys are the account's own (owner = the account); organization keys are the organization's (owner = the
 * organization), so neither list shows the other's.
 */
import { randomUUID } from "node:crypto";
import { Type } from "@sinclair/typebox";
import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { badRequest } from "../http/errors.js";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { hashSecret, newSecret, FULL_TOKEN_PREFIX, SCOPED_KEY_PREFIX } from "./secrets.js";
import { parseScope } from "./scopes.js";
import type { TokenResolver } from "./token-resolver.js";
import { insertToken, revokeScopedKeyRow, scopedKeys, type KeyRow, type TokenRow } from "./tokens-repo.js";

export type { TokenRow, KeyRow } from "./tokens-repo.js";

/**
 * Creates a token and returns its secret, which is never stored and never shown again. `accountId`
 * is the account that acts with it, `owner` whose resources it works on.
 */
export async function issueToken(
  q: Queryable,
  t: {
    accountId: string;
    owner: Owner;
    kind: "full" | "scoped";
    name: string;
    scopes: string[];
    expiresAt: Date | null;
  },
): Promise<{ row: TokenRow; secret: string }> {
  const secret = newSecret(t.kind === "full" ? FULL_TOKEN_PREFIX : SCOPED_KEY_PREFIX);
  const row = await insertToken(q, {
    id: randomUUID(),
    accountId: t.accountId,
    owner: t.owner,
    kind: t.kind,
    name: t.name,
    secretHash: hashSecret(secret),
    displayPrefix: secret.slice(0, 12),
    scopes: t.scopes,
    expiresAt: t.expiresAt,
  });
  return { row, secret };
}

/** What a key request carries (POST /v1/api-keys and POST /v1/org/api-keys take the same body). */
export interface KeyRequest {
  name: string;
  scopes: string[];
  expires_at?: string;
}

export const KeyRequestBody = Body({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 }),
  // format date-time demands a zone: a zoneless time would otherwise be read in the server's local time
  expires_at: Type.Optional(Type.String({ format: "date-time", maxLength: 64, description: "RFC 3339 time" })),
});

/**
 * Issues a scoped key for `by.owner`, acting as `by.accountId`, inside the caller's transaction: every scope must
 * parse (400 invalid_scope naming the bad ones), expires_at must be a future RFC 3339 time. The secret is returned
 * only now.
 */
export async function issueScopedKey(q: Queryable, by: { accountId: string; owner: Owner }, input: KeyRequest) {
  const bad = input.scopes.filter((s) => parseScope(s) === null);
  if (bad.length) throw badRequest("invalid_scope", `Unknown or malformed scope: ${bad.join(", ")}.`);
  let expiresAt: Date | null = null;
  if (input.expires_at !== undefined) {
    expiresAt = new Date(input.expires_at);
    if (Number.isNaN(expiresAt.getTime())) throw badRequest("invalid_request", "expires_at must be an RFC 3339 time.");
    if (expiresAt.getTime() <= Date.now()) throw badRequest("invalid_request", "expires_at must be in the future.");
  }
  return issueToken(q, {
    accountId: by.accountId,
    owner: by.owner,
    kind: "scoped",
    name: input.name,
    scopes: [...new Set(input.scopes)],
    expiresAt,
  });
}

/** The owner's live scoped keys, newest first; `accountId` narrows to the keys one account issued. */
export async function listScopedKeys(q: Queryable, where: { owner: Owner; accountId?: string }): Promise<KeyRow[]> {
  return scopedKeys(q, where);
}

/**
 * Revokes one live scoped key of the owner (and of the issuing account, when given) and announces it, so every API
 * process refuses it at once (NOTIFY on commit; run inside the revoking transaction). False: no such key there.
 */
export async function revokeScopedKey(
  q: Queryable,
  tokens: Pick<TokenResolver, "announceRevocation">,
  where: { id: string; owner: Owner; accountId?: string },
): Promise<boolean> {
  if (!(await revokeScopedKeyRow(q, where))) return false;
  await tokens.announceRevocation(q, { tokenId: where.id });
  return true;
}

export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: "first characters of the key, to recognise it" }),
  scopes: Type.Array(Type.String()),
  expires_at: Nullable(Timestamp),
  last_used_at: Nullable(Timestamp),
  created_at: Timestamp,
});

export const keyView = (t: TokenRow) => ({
  id: t.id,
  name: t.name,
  prefix: t.display_prefix,
  scopes: t.scopes,
  expires_at: t.expires_at?.toISOString() ?? null,
  last_used_at: t.last_used_at?.toISOString() ?? null,
  created_at: t.created_at.toISOString(),
});
