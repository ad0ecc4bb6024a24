import { allRows, allValues, oneRow, returnedRow, type Queryable } from "../../store/db.js";

/** The columns the suite login tokens are sealed under (SecretBox AAD), as the sign-in part writes them. */
export const ACCESS_TOKEN_COLUMN = "suite_identities.access_token_sealed";
export const REFRESH_TOKEN_COLUMN = "suite_identities.refresh_token_sealed";

export interface SuiteLinkRow {
  org_id: string;
  company_id: string;
  stop_on_exhausted: boolean;
  created_at: Date;
}

export async function linkOf(q: Queryable, orgId: string, lock = false): Promise<SuiteLinkRow | null> {
  return oneRow<SuiteLinkRow>(
    q,
    `SELECT org_id, company_id, stop_on_exhausted, created_at FROM suite_links WHERE org_id = $1${lock ? " FOR UPDATE" : ""}`,
    [orgId],
  );
}

export async function setStopOnExhausted(q: Queryable, orgId: string, on: boolean): Promise<void> {
  await q.query("UPDATE suite_links SET stop_on_exhausted = $2, updated_at = now() WHERE org_id = $1", [orgId, on]);
}

/** Suite-linked organizations in billing mode suite (the report job's and the stop job's work list). */
export async function suiteBilledOrgs(q: Queryable): Promise<SuiteLinkRow[]> {
  return allRows<SuiteLinkRow>(
    q,
    `SELECT l.org_id, l.company_id, l.stop_on_exhausted, l.created_at
       FROM suite_links l JOIN orgs o ON o.id = l.org_id WHERE o.billing_mode = 'suite' ORDER BY l.org_id`,
  );
}

export interface IdentityRow {
  account_id: string;
  company_id: string;
  subject: string;
  email: string | null;
  access_token_sealed: string | null;
  refresh_token_sealed: string | null;
  token_expires_at: Date | null;
  deprovisioned_at: Date | null;
}

/** The member's suite identity in that company (the sign-in part writes it), or null. */
export async function identityOf(q: Queryable, accountId: string, companyId: string): Promise<IdentityRow | null> {
  return oneRow<IdentityRow>(
    q,
    `SELECT account_id::text, company_id, subject, email, access_token_sealed, refresh_token_sealed, token_expires_at,
            deprovisioned_at
       FROM suite_identities WHERE account_id = $1 AND company_id = $2`,
    [accountId, companyId],
  );
}

/** A refreshed login token (sealed); the refresh token only when the suite rotated it. */
export async function saveRefreshedTokens(
  q: Queryable,
  accountId: string,
  t: { accessSealed: string; refreshSealed: string | null; expiresAt: Date | null },
): Promise<void> {
  await q.query(
    `UPDATE suite_identities SET access_token_sealed = $2, refresh_token_sealed = coalesce($3, refresh_token_sealed),
        token_expires_at = $4 WHERE account_id = $1`,
    [accountId, t.accessSealed, t.refreshSealed, t.expiresAt],
  );
}

// ---- suite_billing_cursors

/** The organization's cursor, locked (created at `start` the first time): hours before it have report rows. */
export async function lockCursor(q: Queryable, orgId: string, start: Date): Promise<Date> {
  await q.query(
    "INSERT INTO suite_billing_cursors (org_id, reported_through) VALUES ($1, $2) ON CONFLICT (org_id) DO NOTHING",
    [orgId, start],
  );
  const cursor = await returnedRow<{ reported_through: Date }>(
    q,
    "SELECT reported_through FROM suite_billing_cursors WHERE org_id = $1 FOR UPDATE",
    [orgId],
  );
  return cursor.reported_through;
}

export async function advanceCursor(q: Queryable, orgId: string, to: Date): Promise<void> {
  await q.query("UPDATE suite_billing_cursors SET reported_through = $2 WHERE org_id = $1", [orgId, to]);
}

// ---- suite_usage_reports

export interface ReportRow {
  org_id: string;
  account_id: string;
  hour: Date;
  usage_micro: number;
  carry_in_micro: number;
  amount_krw: number;
  carry_out_micro: number;
  idempotency_key: string;
  status: "pending" | "reported" | "nothing";
  attempts: number;
  last_error: string | null;
  record_id: string | null;
  reported_at: Date | null;
}

const REPORT_COLUMNS = `org_id::text, account_id::text, hour, usage_micro::float8 AS usage_micro,
  carry_in_micro::float8 AS carry_in_micro, amount_krw::float8 AS amount_krw, carry_out_micro::float8 AS carry_out_micro,
  idempotency_key, status, attempts, last_error, record_id, reported_at`;

/** Each member's carry: the carry_out of their latest row in the organization. */
export async function carries(q: Queryable, orgId: string, accountIds: string[]): Promise<Map<string, number>> {
  const { rows } = await q.query<{ account_id: string; carry: number }>(
    `SELECT DISTINCT ON (account_id) account_id::text, carry_out_micro::float8 AS carry
       FROM suite_usage_reports WHERE org_id = $1 AND account_id = ANY($2::uuid[])
      ORDER BY account_id, hour DESC`,
    [orgId, accountIds],
  );
  return new Map(rows.map((r) => [r.account_id, r.carry]));
}

export async function insertReport(
  q: Queryable,
  r: Omit<ReportRow, "attempts" | "last_error" | "record_id" | "reported_at">,
): Promise<void> {
  await q.query(
    `INSERT INTO suite_usage_reports (org_id, account_id, hour, usage_micro, carry_in_micro, amount_krw, carry_out_micro,
        idempotency_key, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      r.org_id,
      r.account_id,
      r.hour,
      r.usage_micro,
      r.carry_in_micro,
      r.amount_krw,
      r.carry_out_micro,
      r.idempotency_key,
      r.status,
    ],
  );
}

/** Rows to send now (pending, their back-off over), oldest first. */
export async function dueReports(q: Queryable, limit: number, orgId: string | null = null): Promise<ReportRow[]> {
  return allRows<ReportRow>(
    q,
    `SELECT ${REPORT_COLUMNS} FROM suite_usage_reports
      WHERE status = 'pending' AND next_attempt_at <= now() AND ($2::uuid IS NULL OR org_id = $2)
      ORDER BY hour, org_id, account_id LIMIT $1`,
    [limit, orgId],
  );
}

/** Marks the row reported; false when another run did first (then nothing else is to be done). */
export async function markReported(
  q: Queryable,
  key: string,
  r: { recordId: string; companyId: string; userId: string },
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE suite_usage_reports SET status = 'reported', record_id = $2, company_id = $3, user_id = $4,
        reported_at = now(), attempts = attempts + 1, last_error = NULL
      WHERE idempotency_key = $1 AND status = 'pending'`,
    [key, r.recordId, r.companyId, r.userId],
  );
  return rowCount === 1;
}

/** A failed send: tried again after a back-off that doubles per attempt (1 minute to 1 hour). */
export async function markFailed(q: Queryable, key: string, error: string): Promise<void> {
  await q.query(
    `UPDATE suite_usage_reports SET attempts = attempts + 1, last_error = $2,
        next_attempt_at = now() + least(interval '1 hour', interval '1 minute' * power(2, least(attempts, 6)))
      WHERE idempotency_key = $1 AND status = 'pending'`,
    [key, error.slice(0, 500)],
  );
}

/** Each member's latest report row with an amount (for the status view). */
export async function lastReports(q: Queryable, orgId: string): Promise<ReportRow[]> {
  return allRows<ReportRow>(
    q,
    `SELECT DISTINCT ON (account_id) ${REPORT_COLUMNS} FROM suite_usage_reports
      WHERE org_id = $1 AND status <> 'nothing' ORDER BY account_id, hour DESC`,
    [orgId],
  );
}

// ---- suite_member_billing

export interface MemberBillingRow {
  account_id: string;
  limit_krw: number | null;
  used_krw: number | null;
  remaining_krw: number | null;
  resets_at: Date | null;
  contact: string | null;
  checked_at: Date | null;
  paused_at: Date | null;
  paused_ids: string[];
}

export async function memberBilling(q: Queryable, orgId: string): Promise<MemberBillingRow[]> {
  return allRows<MemberBillingRow>(
    q,
    `SELECT account_id::text, limit_krw::float8 AS limit_krw, used_krw::float8 AS used_krw,
            remaining_krw::float8 AS remaining_krw, resets_at, contact, checked_at, paused_at, paused_ids
       FROM suite_member_billing WHERE org_id = $1 ORDER BY account_id`,
    [orgId],
  );
}

/** Members stop-on-exhausted paused, in the organization. */
export async function pausedMembers(q: Queryable, orgId: string): Promise<string[]> {
  return allValues<string>(
    q,
    "account_id",
    "SELECT account_id::text FROM suite_member_billing WHERE org_id = $1 AND paused_at IS NOT NULL",
    [orgId],
  );
}

export async function saveAllowance(
  q: Queryable,
  orgId: string,
  accountId: string,
  a: { limitKrw: number; usedKrw: number; remainingKrw: number; resetsAt: Date | null; contact: string | null },
): Promise<void> {
  await q.query(
    `INSERT INTO suite_member_billing (org_id, account_id, limit_krw, used_krw, remaining_krw, resets_at, contact, checked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now())
     ON CONFLICT (org_id, account_id) DO UPDATE SET limit_krw = $3, used_krw = $4, remaining_krw = $5, resets_at = $6,
        contact = $7, checked_at = now()`,
    [orgId, accountId, a.limitKrw, a.usedKrw, a.remainingKrw, a.resetsAt, a.contact],
  );
}

/** The member is paused (or paused further): the ids are added to what the suite paused. */
export async function markPaused(q: Queryable, orgId: string, accountId: string, ids: string[]): Promise<void> {
  await q.query(
    `INSERT INTO suite_member_billing (org_id, account_id, paused_at, paused_ids) VALUES ($1, $2, now(), $3)
     ON CONFLICT (org_id, account_id) DO UPDATE
       SET paused_at = coalesce(suite_member_billing.paused_at, now()),
           paused_ids = ARRAY(SELECT DISTINCT unnest(suite_member_billing.paused_ids || $3::text[]))`,
    [orgId, accountId, ids],
  );
}

export async function markResumed(q: Queryable, orgId: string, accountId: string): Promise<void> {
  await q.query(
    "UPDATE suite_member_billing SET paused_at = NULL, paused_ids = '{}' WHERE org_id = $1 AND account_id = $2",
    [orgId, accountId],
  );
}

/** Locks the member's row (created if missing), so two stop runs take turns per member. */
export async function lockMember(q: Queryable, orgId: string, accountId: string): Promise<{ paused: boolean }> {
  await q.query(
    "INSERT INTO suite_member_billing (org_id, account_id) VALUES ($1, $2) ON CONFLICT (org_id, account_id) DO NOTHING",
    [orgId, accountId],
  );
  const member = await returnedRow<{ paused_at: Date | null }>(
    q,
    "SELECT paused_at FROM suite_member_billing WHERE org_id = $1 AND account_id = $2 FOR UPDATE",
    [orgId, accountId],
  );
  return { paused: member.paused_at !== null };
}
