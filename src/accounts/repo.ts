import { randomUUID } from "node:crypto";
import { anyRows, oneRow, type Queryable } from "../store/db.js";

export interface AccountRow {
  id: string;
  email: string;
  password_hash: string | null;
  display_name: string | null;
  locale: "ko" | "en";
  account_spend_cap_krw: number | null;
  app_spend_cap_krw: number | null;
  created_at: Date;
}

const ACCOUNT_COLUMNS =
  "id, email, password_hash, display_name, locale, account_spend_cap_krw, app_spend_cap_krw, created_at";

export async function insertAccount(
  q: Queryable,
  a: { email: string; passwordHash: string | null; displayName: string | null; signIn?: "password" | "suite" },
): Promise<AccountRow> {
  const { rows } = await q.query<AccountRow>(
    `INSERT INTO accounts (id, email, password_hash, display_name, sign_in) VALUES ($1, $2, $3, $4, $5)
     RETURNING ${ACCOUNT_COLUMNS}`,
    [randomUUID(), a.email, a.passwordHash, a.displayName, a.signIn ?? "password"],
  );
  return rows[0];
}

export async function findLiveAccount(q: Queryable, id: string): Promise<AccountRow | null> {
  return oneRow<AccountRow>(q, `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1 AND deleted_at IS NULL`, [id]);
}

/**
 * The live password account of an e-mail (password sign-in, the edge's visitor sign-in, linked apps). Suite accounts
 * (sign_in 'suite') may share the e-mail and are never found here: they sign in only through the suite.
 */
export async function findLiveAccountByEmail(q: Queryable, email: string): Promise<AccountRow | null> {
  return oneRow<AccountRow>(
    q,
    `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = $1 AND deleted_at IS NULL AND sign_in = 'password'`,
    [email],
  );
}

export async function updateAccount(
  q: Queryable,
  id: string,
  patch: Partial<
    Record<
      "display_name" | "locale" | "password_hash" | "account_spend_cap_krw" | "app_spend_cap_krw",
      string | number | null
    >
  >,
): Promise<AccountRow> {
  const keys = Object.keys(patch) as (keyof typeof patch)[];
  const sets = keys.map((k, i) => `${k} = $${i + 2}`);
  const { rows } = await q.query<AccountRow>(
    `UPDATE accounts SET ${sets.join(", ")} WHERE id = $1 AND deleted_at IS NULL RETURNING ${ACCOUNT_COLUMNS}`,
    [id, ...keys.map((k) => patch[k])],
  );
  return rows[0];
}

export async function markAccountDeleted(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE accounts SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL", [id]);
}

export async function revokeToken(q: Queryable, accountId: string, tokenId: string): Promise<boolean> {
  return anyRows(q, "UPDATE tokens SET revoked_at = now() WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL", [
    tokenId,
    accountId,
  ]);
}

export async function revokeAllTokens(
  q: Queryable,
  accountId: string,
  opts: { kind?: "full"; except?: string } = {},
): Promise<void> {
  await q.query(
    `UPDATE tokens SET revoked_at = now()
      WHERE account_id = $1 AND revoked_at IS NULL
        AND ($2::text IS NULL OR kind = $2) AND ($3::uuid IS NULL OR id <> $3)`,
    [accountId, opts.kind ?? null, opts.except ?? null],
  );
}

/** How a live account signs in ('password' or 'suite', migration 046), or null. */
export async function signInOf(q: Queryable, id: string): Promise<"password" | "suite" | null> {
  const { rows } = await q.query<{ sign_in: "password" | "suite" }>(
    "SELECT sign_in FROM accounts WHERE id = $1 AND deleted_at IS NULL",
    [id],
  );
  return rows[0]?.sign_in ?? null;
}
