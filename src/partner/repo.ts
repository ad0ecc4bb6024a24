/** The partners table: which accounts are partners, their billing mode, limit, visitor login and child scope ceiling. */
import { oneRow, type Queryable } from "../store/db.js";
import { patchParams } from "../store/patch.js";

export type BillingMode = "child_prepaid" | "partner_postpaid";

export interface PartnerRow {
  account_id: string;
  billing_mode: BillingMode;
  monthly_limit_krw: number | null;
  visitor_login_url: string | null;
  child_scopes: string[] | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = "account_id, billing_mode, monthly_limit_krw, visitor_login_url, child_scopes, created_at, updated_at";

export async function findPartner(q: Queryable, accountId: string, opts: { forUpdate?: boolean } = {}) {
  return oneRow<PartnerRow>(
    q,
    `SELECT ${COLUMNS} FROM partners WHERE account_id = $1${opts.forUpdate ? " FOR UPDATE" : ""}`,
    [accountId],
  );
}

/** Makes the account a partner or updates it (operator). */
export async function upsertPartner(
  q: Queryable,
  accountId: string,
  v: { billing_mode: BillingMode; monthly_limit_krw: number | null },
): Promise<PartnerRow> {
  const { rows } = await q.query<PartnerRow>(
    `INSERT INTO partners (account_id, billing_mode, monthly_limit_krw) VALUES ($1, $2, $3)
     ON CONFLICT (account_id) DO UPDATE SET billing_mode = EXCLUDED.billing_mode,
       monthly_limit_krw = EXCLUDED.monthly_limit_krw, updated_at = now()
     RETURNING ${COLUMNS}`,
    [accountId, v.billing_mode, v.monthly_limit_krw],
  );
  return rows[0];
}

export async function updateProfile(
  q: Queryable,
  accountId: string,
  v: { visitor_login_url?: string | null; child_scopes?: string[] | null },
): Promise<PartnerRow> {
  const { rows } = await q.query<PartnerRow>(
    `UPDATE partners SET
       visitor_login_url = CASE WHEN $2 THEN $3 ELSE visitor_login_url END,
       child_scopes = CASE WHEN $4 THEN $5::text[] ELSE child_scopes END,
       updated_at = now()
     WHERE account_id = $1 RETURNING ${COLUMNS}`,
    [accountId, ...patchParams(v, ["visitor_login_url", "child_scopes"])],
  );
  return rows[0];
}
