/** The SQL of tokens (api-keys.ts, token-resolver.ts): issuing, listing and revoking keys, resolving a bearer. */
import { allRows, anyRows, type Queryable } from "../store/db.js";
import type { Owner, OwnerKind } from "../kernel/owner.js";
import type { AccountSnapshot } from "./principal.js";

export interface TokenRow {
  id: string;
  account_id: string;
  kind: "full" | "scoped";
  name: string;
  display_prefix: string;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

/** A scoped key as lists show it: the row and its issuer's e-mail. */
export interface KeyRow extends TokenRow {
  issuer_email: string;
}

/** A live token with its account, as a principal is made from it. */
export interface PrincipalRow extends Omit<AccountSnapshot, "id"> {
  id: string;
  kind: "full" | "scoped";
  scopes: string[];
  expires_at: Date | null;
  owner_kind: OwnerKind;
  owner_id: string;
  account_id: string;
}

const TOKEN_COLUMNS =
  "id, account_id, kind, name, display_prefix, scopes, expires_at, revoked_at, last_used_at, created_at";

export async function insertToken(
  q: Queryable,
  t: {
    id: string;
    accountId: string;
    owner: Owner;
    kind: "full" | "scoped";
    name: string;
    secretHash: Buffer;
    displayPrefix: string;
    scopes: string[];
    expiresAt: Date | null;
  },
): Promise<TokenRow> {
  const { rows } = await q.query<TokenRow>(
    `INSERT INTO tokens (id, account_id, owner_kind, owner_id, kind, name, secret_hash, display_prefix, scopes, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${TOKEN_COLUMNS}`,
    [t.id, t.accountId, t.owner.kind, t.owner.id, t.kind, t.name, t.secretHash, t.displayPrefix, t.scopes, t.expiresAt],
  );
  return rows[0];
}

/** The owner's live scoped keys, newest first; `accountId` narrows to the keys one account issued. */
export async function scopedKeys(q: Queryable, where: { owner: Owner; accountId?: string }): Promise<KeyRow[]> {
  return allRows<KeyRow>(
    q,
    `SELECT ${TOKEN_COLUMNS.split(", ")
      .map((c) => `t.${c}`)
      .join(", ")}, a.email AS issuer_email
       FROM tokens t JOIN accounts a ON a.id = t.account_id
      WHERE t.owner_kind = $1 AND t.owner_id = $2 AND ($3::uuid IS NULL OR t.account_id = $3)
        AND t.kind = 'scoped' AND t.revoked_at IS NULL
      ORDER BY t.created_at DESC, t.id`,
    [where.owner.kind, where.owner.id, where.accountId ?? null],
  );
}

/** Revokes a live scoped key of the owner (issued by `accountId` when given); whether there was one. */
export async function revokeScopedKeyRow(
  q: Queryable,
  where: { id: string; owner: Owner; accountId?: string },
): Promise<boolean> {
  return anyRows(
    q,
    `UPDATE tokens SET revoked_at = now()
      WHERE id = $1 AND owner_kind = $2 AND owner_id = $3 AND ($4::uuid IS NULL OR account_id = $4)
        AND kind = 'scoped' AND revoked_at IS NULL`,
    [where.id, where.owner.kind, where.owner.id, where.accountId ?? null],
  );
}

export async function touchToken(q: Queryable, tokenId: string): Promise<void> {
  await q.query({
    name: "token-touch",
    text: "UPDATE tokens SET last_used_at = now() WHERE id = $1",
    values: [tokenId],
  });
}

/** The live token of this secret hash with its live account, or null. */
export async function principalRow(q: Queryable, secretHash: Buffer): Promise<PrincipalRow | null> {
  const { rows } = await q.query<PrincipalRow>({
    // named: planned once per connection, this runs on every cache miss
    name: "token-load",
    text: `SELECT t.id, t.kind, t.scopes, t.expires_at, t.owner_kind, t.owner_id, a.id AS account_id, a.email, a.display_name, a.locale,
                  a.password_hash IS NOT NULL AS has_password, a.account_spend_cap_krw, a.app_spend_cap_krw, a.created_at
             FROM tokens t JOIN accounts a ON a.id = t.account_id
            WHERE t.secret_hash = $1 AND a.deleted_at IS NULL
              AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
    values: [secretHash],
  });
  return rows[0] ?? null;
}

/** Tells every process (NOTIFY on `channel`) at commit. */
export async function notify(q: Queryable, channel: string, payload: string): Promise<void> {
  await q.query("SELECT pg_notify($1, $2)", [channel, payload]);
}
