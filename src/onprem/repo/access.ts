/** SQL of access inquiries and terms acceptances. */
import { allRows, oneRow, type Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";

export interface AccessRow {
  id: string;
  owner_kind: "account" | "org";
  owner_id: string;
  account_id: string;
  requester_email: string;
  company: string;
  contact: string;
  message: string;
  status: "pending" | "approved" | "rejected";
  note: string | null;
  decided_at: Date | null;
  created_at: Date;
}

const COLUMNS =
  "id, owner_kind, owner_id, account_id, requester_email, company, contact, message, status, note, decided_at, created_at";

export async function insertAccessRequest(
  q: Queryable,
  r: Pick<AccessRow, "id" | "account_id" | "requester_email" | "company" | "contact" | "message"> & { owner: Owner },
): Promise<AccessRow> {
  const { rows } = await q.query<AccessRow>(
    `INSERT INTO onprem_access_requests (id, owner_kind, owner_id, account_id, requester_email, company, contact, message)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [r.id, r.owner.kind, r.owner.id, r.account_id, r.requester_email, r.company, r.contact, r.message],
  );
  return rows[0];
}

/** The owner's inquiries, newest first. */
export async function accessRequestsOf(q: Queryable, owner: Owner, limit = 20): Promise<AccessRow[]> {
  return allRows<AccessRow>(
    q,
    `SELECT ${COLUMNS} FROM onprem_access_requests WHERE owner_kind = $1 AND owner_id = $2
      ORDER BY created_at DESC, id DESC LIMIT $3`,
    [owner.kind, owner.id, limit],
  );
}

/** Whether an operator approved an inquiry of the owner. */
export async function isApproved(q: Queryable, owner: Owner): Promise<boolean> {
  const { rows } = await q.query(
    "SELECT 1 FROM onprem_access_requests WHERE owner_kind = $1 AND owner_id = $2 AND status = 'approved' LIMIT 1",
    [owner.kind, owner.id],
  );
  return rows.length > 0;
}

export async function listAccessRequests(
  q: Queryable,
  status: AccessRow["status"] | null,
  limit: number,
): Promise<AccessRow[]> {
  return allRows<AccessRow>(
    q,
    `SELECT ${COLUMNS} FROM onprem_access_requests WHERE ($1::text IS NULL OR status = $1)
      ORDER BY created_at DESC, id DESC LIMIT $2`,
    [status, limit],
  );
}

export async function lockAccessRequest(q: Queryable, id: string): Promise<AccessRow | null> {
  return oneRow<AccessRow>(q, `SELECT ${COLUMNS} FROM onprem_access_requests WHERE id = $1 FOR UPDATE`, [id]);
}

export async function decideAccessRequest(
  q: Queryable,
  id: string,
  status: "approved" | "rejected",
  note: string | null,
): Promise<AccessRow> {
  const { rows } = await q.query<AccessRow>(
    `UPDATE onprem_access_requests SET status = $2, note = $3, decided_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, status, note],
  );
  return rows[0];
}

export async function acceptedAt(q: Queryable, accountId: string, version: string): Promise<Date | null> {
  const { rows } = await q.query<{ accepted_at: Date }>(
    "SELECT accepted_at FROM onprem_terms_acceptances WHERE account_id = $1 AND version = $2",
    [accountId, version],
  );
  return rows[0]?.accepted_at ?? null;
}

export async function acceptTerms(q: Queryable, accountId: string, version: string): Promise<void> {
  await q.query("INSERT INTO onprem_terms_acceptances (account_id, version) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
    accountId,
    version,
  ]);
}
