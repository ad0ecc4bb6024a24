/** SQL of partner settlement, invoices and billing mails (README.md here). */
import { allRows, oneRow, type Queryable } from "../../store/db.js";

/** advisory lock classes: one window's settlement, one partner's invoicing */
const SETTLE_LOCK = 2601;
const INVOICE_LOCK = 2602;

export async function lockWindow(q: Queryable, windowStart: Date): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock($1, $2)", [SETTLE_LOCK, Math.floor(windowStart.getTime() / 60_000)]);
}

export async function lockPartnerInvoices(q: Queryable, partnerId: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [INVOICE_LOCK, partnerId]);
}

export async function windowSettled(q: Queryable, windowStart: Date): Promise<boolean> {
  const { rowCount } = await q.query("SELECT 1 FROM partner_settlement_windows WHERE window_start = $1", [windowStart]);
  return !!rowCount;
}

export async function lastSettledWindow(q: Queryable): Promise<Date | null> {
  const { rows } = await q.query<{ w: Date | null }>("SELECT max(window_start) AS w FROM partner_settlement_windows");
  return rows[0].w;
}

/** A plain insert: a second settlement of the window would violate the key and abort its transaction. */
export async function markWindow(q: Queryable, windowStart: Date, children: number): Promise<void> {
  await q.query("INSERT INTO partner_settlement_windows (window_start, children) VALUES ($1, $2)", [
    windowStart,
    children,
  ]);
}

/** Each child's partner (deleted children too: their last usage is still billed), for partners in postpaid. */
export async function postpaidPartnersOf(q: Queryable, childIds: string[]): Promise<Map<string, string>> {
  const { rows } = await q.query<{ id: string; partner_id: string }>(
    `SELECT c.id::text, c.partner_id::text FROM partner_children c JOIN partners p ON p.account_id = c.partner_id
      WHERE c.id = ANY($1::uuid[]) AND p.billing_mode = 'partner_postpaid'`,
    [childIds],
  );
  return new Map(rows.map((r) => [r.id, r.partner_id]));
}

export interface SettlementRow {
  child_id: string;
  partner_id: string;
  amount_krw: number;
  transaction_id: string;
}

/** One statement for the whole window (unique (child, window): a duplicate aborts rather than settles twice). */
export async function insertSettlements(q: Queryable, windowStart: Date, rows: SettlementRow[]): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `INSERT INTO partner_settlements (child_id, window_start, partner_id, amount_krw, transaction_id)
     SELECT c, $1, p, a, t FROM unnest($2::uuid[], $3::uuid[], $4::bigint[], $5::uuid[]) AS x(c, p, a, t)`,
    [
      windowStart,
      rows.map((r) => r.child_id),
      rows.map((r) => r.partner_id),
      rows.map((r) => r.amount_krw),
      rows.map((r) => r.transaction_id),
    ],
  );
}

export async function addMonthUsage(q: Queryable, month: string, perPartner: Map<string, number>): Promise<void> {
  if (!perPartner.size) return;
  await q.query(
    `INSERT INTO partner_month_usage (partner_id, month, krw)
     SELECT p, $1, k FROM unnest($2::uuid[], $3::bigint[]) AS x(p, k) ORDER BY p
     ON CONFLICT (partner_id, month) DO UPDATE SET krw = partner_month_usage.krw + EXCLUDED.krw`,
    [month, [...perPartner.keys()], [...perPartner.values()]],
  );
}

/** Settled usage of a partner's children in [from, to), per child. */
export async function settledPerChild(
  q: Queryable,
  partnerId: string,
  from: Date,
  to: Date,
): Promise<{ child_id: string; external_ref: string; windows: number; krw: number }[]> {
  const { rows } = await q.query<{ child_id: string; external_ref: string; windows: number; krw: string }>(
    `SELECT s.child_id::text, c.external_ref, count(*)::int AS windows, sum(s.amount_krw)::bigint AS krw
       FROM partner_settlements s JOIN partner_children c ON c.id = s.child_id
      WHERE s.partner_id = $1 AND s.window_start >= $2 AND s.window_start < $3
      GROUP BY s.child_id, c.external_ref ORDER BY c.external_ref`,
    [partnerId, from, to],
  );
  return rows.map((r) => ({ ...r, krw: Number(r.krw) }));
}

/** The partners that were ever settled, with their first settled window and the end of their last invoice. */
export async function invoicedPartners(
  q: Queryable,
): Promise<{ partner_id: string; first_window: Date | null; invoiced_until: Date | null }[]> {
  const { rows } = await q.query(
    `SELECT p.account_id::text AS partner_id,
            (SELECT min(window_start) FROM partner_settlements s WHERE s.partner_id = p.account_id) AS first_window,
            (SELECT max(period_end) FROM partner_invoices i WHERE i.partner_id = p.account_id) AS invoiced_until
       FROM partners p`,
  );
  return rows.filter((r) => r.first_window !== null);
}

export interface InvoiceRow {
  id: string;
  partner_id: string;
  month: string;
  period_start: Date;
  period_end: Date;
  currency: string;
  usage_micro: string;
  adjustment_micro: string;
  total_micro: string;
  status: "unpaid" | "paid";
  paid_at: Date | null;
  created_at: Date;
}
const INVOICE = `id::text, partner_id::text, month, period_start, period_end, currency, usage_micro, adjustment_micro,
  total_micro, status, paid_at, created_at`;

/** ON CONFLICT DO NOTHING on (partner, period_start): null when the month already has its invoice. */
export async function insertInvoice(
  q: Queryable,
  v: Omit<InvoiceRow, "created_at" | "paid_at" | "currency" | "usage_micro" | "adjustment_micro" | "total_micro"> & {
    usage: number;
    adjustment: number;
  },
): Promise<InvoiceRow | null> {
  return oneRow<InvoiceRow>(
    q,
    `INSERT INTO partner_invoices (id, partner_id, month, period_start, period_end, usage_micro, adjustment_micro,
                                   total_micro, status, paid_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $6::bigint - $7::bigint, $8, CASE WHEN $8 = 'paid' THEN now() END)
     ON CONFLICT (partner_id, period_start) DO NOTHING RETURNING ${INVOICE}`,
    [v.id, v.partner_id, v.month, v.period_start, v.period_end, v.usage, v.adjustment, v.status],
  );
}

/** Micro-units of adjustment the partner's invoices subtracted so far. */
export async function adjustedSoFar(q: Queryable, partnerId: string): Promise<number> {
  const { rows } = await q.query<{ micro: string }>(
    "SELECT coalesce(sum(adjustment_micro), 0)::bigint AS micro FROM partner_invoices WHERE partner_id = $1",
    [partnerId],
  );
  return Number(rows[0].micro);
}

export async function insertStatements(
  q: Queryable,
  invoiceId: string,
  lines: { child_id: string; external_ref: string; windows: number; usage_micro: number }[],
): Promise<void> {
  if (!lines.length) return;
  await q.query(
    `INSERT INTO partner_invoice_statements (invoice_id, child_id, external_ref, windows, usage_micro)
     SELECT $1, c, r, w, u FROM unnest($2::uuid[], $3::text[], $4::int[], $5::bigint[]) AS x(c, r, w, u)`,
    [
      invoiceId,
      lines.map((l) => l.child_id),
      lines.map((l) => l.external_ref),
      lines.map((l) => l.windows),
      lines.map((l) => l.usage_micro),
    ],
  );
}

export async function invoicesOf(q: Queryable, partnerId: string): Promise<InvoiceRow[]> {
  return allRows<InvoiceRow>(
    q,
    `SELECT ${INVOICE} FROM partner_invoices WHERE partner_id = $1 ORDER BY period_start DESC LIMIT 120`,
    [partnerId],
  );
}

export async function invoiceById(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}) {
  return oneRow<InvoiceRow>(
    q,
    `SELECT ${INVOICE} FROM partner_invoices WHERE id = $1${opts.forUpdate ? " FOR UPDATE" : ""}`,
    [id],
  );
}

export async function statementsOf(q: Queryable, invoiceId: string) {
  return allRows<{ child_id: string; external_ref: string; windows: number; usage_micro: string }>(
    q,
    `SELECT child_id::text, external_ref, windows, usage_micro FROM partner_invoice_statements
      WHERE invoice_id = $1 ORDER BY external_ref`,
    [invoiceId],
  );
}

export async function invoicesByStatus(q: Queryable, status: string | null): Promise<InvoiceRow[]> {
  return allRows<InvoiceRow>(
    q,
    `SELECT ${INVOICE} FROM partner_invoices WHERE ($1::text IS NULL OR status = $1)
      ORDER BY created_at DESC, id LIMIT 500`,
    [status],
  );
}

export async function markPaid(q: Queryable, id: string, transactionId: string): Promise<void> {
  await q.query(
    "UPDATE partner_invoices SET status = 'paid', paid_at = now(), payment_transaction_id = $2 WHERE id = $1",
    [id, transactionId],
  );
}

/** Unpaid invoices nobody told the operator about yet. */
export async function unnoticedUnpaid(q: Queryable): Promise<InvoiceRow[]> {
  return allRows<InvoiceRow>(
    q,
    `SELECT ${INVOICE} FROM partner_invoices i WHERE status = 'unpaid' AND NOT EXISTS
       (SELECT 1 FROM partner_billing_notices n
         WHERE n.partner_id = i.partner_id AND n.kind = 'invoice_unpaid' AND n.period = i.id::text)
      ORDER BY created_at LIMIT 100`,
  );
}

/** Postpaid partners' settled usage of a month beside their limit, with the partner's e-mail. */
export async function monthAgainstLimits(q: Queryable, month: string) {
  const { rows } = await q.query<{ partner_id: string; krw: string; limit_krw: string; email: string | null }>(
    `SELECT u.partner_id::text, u.krw, p.monthly_limit_krw AS limit_krw, a.email
       FROM partner_month_usage u JOIN partners p ON p.account_id = u.partner_id
       LEFT JOIN accounts a ON a.id = p.account_id
      WHERE u.month = $1 AND p.billing_mode = 'partner_postpaid' AND p.monthly_limit_krw IS NOT NULL
        AND u.krw * 100 >= p.monthly_limit_krw * 80`,
    [month],
  );
  return rows.map((r) => ({ ...r, krw: Number(r.krw), limit_krw: Number(r.limit_krw) }));
}

/** Claims mails (the key: one process wins, later runs find them taken); answers the kinds claimed now. */
export async function claimNotices(q: Queryable, partnerId: string, kinds: string[], period: string) {
  const { rows } = await q.query<{ kind: string }>(
    `INSERT INTO partner_billing_notices (partner_id, kind, period) SELECT $1, k, $3 FROM unnest($2::text[]) AS k
     ON CONFLICT DO NOTHING RETURNING kind`,
    [partnerId, kinds, period],
  );
  return rows.map((r) => r.kind);
}

/** A mail that could not be sent gives its claims back, so the next run retries. */
export async function releaseNotices(q: Queryable, partnerId: string, kinds: string[], period: string) {
  await q.query("DELETE FROM partner_billing_notices WHERE partner_id = $1 AND kind = ANY($2) AND period = $3", [
    partnerId,
    kinds,
    period,
  ]);
}
