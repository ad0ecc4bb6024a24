/** SQL of organization card billing and invoices (migration 030). */
import { allRows, oneRow, type Queryable } from "../../store/db.js";

export type InvoiceStatus = "pending" | "paid" | "failed";
export type InvoiceKind = "monthly" | "closing";

export interface CardBillingRow {
  org_id: string;
  registered_at: Date;
  registered_by: string;
  previous_mode: "personal" | "prepaid";
}

export interface InvoiceRow {
  id: string;
  org_id: string;
  month: string;
  kind: InvoiceKind;
  period_start: Date;
  period_end: Date;
  total_krw: number;
  status: InvoiceStatus;
  attempts: number;
  failures: number;
  next_attempt_at: Date | null;
  charging_since: Date | null;
  attempt_card_id: string | null;
  last_attempt_at: Date | null;
  failure_code: string | null;
  failure_message: string | null;
  card_provider: "stripe" | "toss" | null;
  card_brand: string | null;
  card_last4: string | null;
  provider_ref: string | null;
  payment_transaction_id: string | null;
  waived: boolean;
  paid_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface LineRow {
  account_id: string;
  email: string | null;
  display_name: string | null;
  kind: string;
  usage_microkrw: number;
}

const COLS = `id, org_id, month, kind, period_start, period_end, total_krw, status, attempts, failures, next_attempt_at,
  charging_since, attempt_card_id, last_attempt_at, failure_code, failure_message, card_provider, card_brand, card_last4, provider_ref,
  payment_transaction_id, waived, paid_at, created_at, updated_at`;
const ICOLS = COLS.split(",")
  .map((c) => `i.${c.trim()}`)
  .join(", ");

/** Serialises finalisation, card registration and removal of one organization (two workers, a request). */
export async function lockOrgBilling(q: Queryable, orgId: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('org-invoice:' || $1))", [orgId]);
}

export async function findCardBilling(q: Queryable, orgId: string): Promise<CardBillingRow | null> {
  return oneRow<CardBillingRow>(
    q,
    "SELECT org_id, registered_at, registered_by, previous_mode FROM org_card_billing WHERE org_id = $1",
    [orgId],
  );
}

export async function insertCardBilling(q: Queryable, r: CardBillingRow): Promise<CardBillingRow> {
  const { rows } = await q.query<CardBillingRow>(
    `INSERT INTO org_card_billing (org_id, registered_at, registered_by, previous_mode) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id) DO UPDATE SET registered_at = EXCLUDED.registered_at, registered_by = EXCLUDED.registered_by,
       previous_mode = EXCLUDED.previous_mode
     RETURNING org_id, registered_at, registered_by, previous_mode`,
    [r.org_id, r.registered_at, r.registered_by, r.previous_mode],
  );
  return rows[0];
}

export async function deleteCardBilling(q: Queryable, orgId: string): Promise<void> {
  await q.query("DELETE FROM org_card_billing WHERE org_id = $1", [orgId]);
}

/** Organizations paying by card now (billing_mode card with a registration). */
export async function cardOrgs(q: Queryable): Promise<CardBillingRow[]> {
  return allRows<CardBillingRow>(
    q,
    `SELECT c.org_id, c.registered_at, c.registered_by, c.previous_mode
       FROM org_card_billing c JOIN orgs o ON o.id = c.org_id WHERE o.billing_mode = 'card' ORDER BY c.org_id`,
  );
}

export async function periodStarts(q: Queryable, orgId: string, since: Date): Promise<Set<number>> {
  const { rows } = await q.query<{ period_start: Date }>(
    "SELECT period_start FROM org_invoices WHERE org_id = $1 AND period_start >= $2",
    [orgId, since],
  );
  return new Set(rows.map((r) => r.period_start.getTime()));
}

export type NewInvoice = Pick<
  InvoiceRow,
  | "id"
  | "org_id"
  | "month"
  | "kind"
  | "period_start"
  | "period_end"
  | "total_krw"
  | "status"
  | "next_attempt_at"
  | "paid_at"
  | "card_provider"
  | "card_brand"
  | "card_last4"
>;

/** Once per organization and period start: null when it exists already. */
export async function insertInvoice(q: Queryable, i: NewInvoice): Promise<InvoiceRow | null> {
  return oneRow<InvoiceRow>(
    q,
    `INSERT INTO org_invoices (id, org_id, month, kind, period_start, period_end, total_krw, status, next_attempt_at, paid_at,
                               card_provider, card_brand, card_last4)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT ON CONSTRAINT org_invoices_once DO NOTHING RETURNING ${COLS}`,
    [
      i.id,
      i.org_id,
      i.month,
      i.kind,
      i.period_start,
      i.period_end,
      i.total_krw,
      i.status,
      i.next_attempt_at,
      i.paid_at,
      i.card_provider,
      i.card_brand,
      i.card_last4,
    ],
  );
}

export async function insertLines(
  q: Queryable,
  invoiceId: string,
  lines: { accountId: string; kind: string; microkrw: number }[],
): Promise<void> {
  if (!lines.length) return;
  await q.query(
    `INSERT INTO org_invoice_lines (invoice_id, account_id, kind, usage_microkrw)
     SELECT $1, a, k, m FROM unnest($2::uuid[], $3::text[], $4::bigint[]) AS v(a, k, m)`,
    [invoiceId, lines.map((l) => l.accountId), lines.map((l) => l.kind), lines.map((l) => l.microkrw)],
  );
}

/** Newest period first; the cursor is the last invoice id of the previous page. */
export async function listInvoices(q: Queryable, orgId: string, limit: number, afterId?: string) {
  return allRows<InvoiceRow>(
    q,
    `SELECT ${COLS} FROM org_invoices WHERE org_id = $1
        AND ($2::uuid IS NULL OR period_start < (SELECT period_start FROM org_invoices WHERE id = $2 AND org_id = $1))
      ORDER BY period_start DESC LIMIT $3`,
    [orgId, afterId ?? null, limit],
  );
}

export async function findInvoice(q: Queryable, orgId: string, id: string, lock = false): Promise<InvoiceRow | null> {
  return oneRow<InvoiceRow>(
    q,
    `SELECT ${COLS} FROM org_invoices WHERE id = $1 AND org_id = $2 ${lock ? "FOR UPDATE" : ""}`,
    [id, orgId],
  );
}

export async function lockInvoice(q: Queryable, id: string): Promise<InvoiceRow | null> {
  return oneRow<InvoiceRow>(q, `SELECT ${COLS} FROM org_invoices WHERE id = $1 FOR UPDATE`, [id]);
}

export async function invoiceLines(q: Queryable, invoiceId: string): Promise<LineRow[]> {
  return allRows<LineRow>(
    q,
    `SELECT l.account_id::text, a.email, a.display_name, l.kind, l.usage_microkrw
       FROM org_invoice_lines l LEFT JOIN accounts a ON a.id = l.account_id
      WHERE l.invoice_id = $1 ORDER BY a.email NULLS LAST, l.account_id, l.kind`,
    [invoiceId],
  );
}

export async function unpaidCount(q: Queryable, orgId: string): Promise<{ n: number; krw: number }> {
  const { rows } = await q.query<{ n: number; krw: number }>(
    "SELECT count(*)::int AS n, coalesce(sum(total_krw), 0)::bigint AS krw FROM org_invoices WHERE org_id = $1 AND status <> 'paid'",
    [orgId],
  );
  return rows[0];
}

/** After a card change: unpaid invoices are charged again at once, their declines forgotten. */
export async function rearmUnpaid(q: Queryable, orgId: string, now: Date): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE org_invoices SET status = 'pending', failures = 0, next_attempt_at = $2, updated_at = now()
      WHERE org_id = $1 AND status IN ('pending', 'failed') AND charging_since IS NULL`,
    [orgId, now],
  );
  return rowCount ?? 0;
}

/**
 * Claims invoices to charge now: due ones start a new attempt (attempts + 1), ones whose attempt was claimed before
 * `staleBefore` and never answered retry that attempt (same number, so the same provider keys, and the provider
 * payment and card it used). A new attempt forgets the last one's provider payment and card. Rows another
 * worker holds are skipped; the claim commits at once, so each attempt is made by one worker.
 */
export async function claimDue(
  q: Queryable,
  now: Date,
  staleBefore: Date,
  limit: number,
  only?: string,
): Promise<InvoiceRow[]> {
  return allRows<InvoiceRow>(
    q,
    `WITH due AS (
       SELECT id FROM org_invoices
        WHERE status = 'pending' AND ($4::uuid IS NULL OR id = $4)
          AND ((charging_since IS NULL AND next_attempt_at <= $1) OR charging_since < $2)
        ORDER BY next_attempt_at NULLS FIRST, id LIMIT $3 FOR UPDATE SKIP LOCKED)
     UPDATE org_invoices i
        SET attempts = CASE WHEN i.charging_since IS NULL THEN i.attempts + 1 ELSE i.attempts END,
            provider_ref = CASE WHEN i.charging_since IS NULL THEN NULL ELSE i.provider_ref END,
            attempt_card_id = CASE WHEN i.charging_since IS NULL THEN NULL ELSE i.attempt_card_id END,
            charging_since = $1, last_attempt_at = $1, updated_at = now()
       FROM due WHERE i.id = due.id RETURNING ${ICOLS}`,
    [now, staleBefore, limit, only ?? null],
  );
}

/** The card an attempt charges, recorded before the charge (only while that attempt is the invoice's current one). */
export async function pinAttemptCard(q: Queryable, id: string, attempt: number, cardId: string): Promise<void> {
  await q.query(
    "UPDATE org_invoices SET attempt_card_id = $3 WHERE id = $1 AND attempts = $2 AND attempt_card_id IS NULL",
    [id, attempt, cardId],
  );
}

export type InvoicePatch = Partial<
  Pick<
    InvoiceRow,
    | "status"
    | "failures"
    | "next_attempt_at"
    | "charging_since"
    | "failure_code"
    | "failure_message"
    | "card_provider"
    | "card_brand"
    | "card_last4"
    | "provider_ref"
    | "payment_transaction_id"
    | "waived"
    | "paid_at"
  >
>;

export async function updateInvoice(q: Queryable, id: string, patch: InvoicePatch): Promise<InvoiceRow> {
  const keys = Object.keys(patch) as (keyof InvoicePatch)[];
  const { rows } = await q.query<InvoiceRow>(
    `UPDATE org_invoices SET ${[...keys.map((k, i) => `${k} = $${i + 2}`), "updated_at = now()"].join(", ")}
      WHERE id = $1 RETURNING ${COLS}`,
    [id, ...keys.map((k) => patch[k])],
  );
  return rows[0];
}
