/** SQL of orders and licenses. */
import { allRows, oneRow, type Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";

export interface LicenseRow {
  id: string;
  kind: "trial" | "paid";
  owner_kind: "account" | "org";
  owner_id: string;
  account_id: string;
  order_id: string | null;
  renews: string | null;
  customer: string;
  hosts: number;
  not_before: Date;
  not_after: Date;
  features: string[];
  issued_at: Date;
  key_id: string;
  file: string;
}

export interface OrderRow {
  id: string;
  order_id: string;
  owner_kind: "account" | "org";
  owner_id: string;
  account_id: string;
  customer: string;
  hosts: number;
  months: number;
  amount_krw: number;
  order_name: string;
  renew_of: string | null;
  status: "pending" | "paid";
  payment_key: string | null;
  failure_code: string | null;
  failure_message: string | null;
  ledger_transaction_id: string | null;
  created_at: Date;
  paid_at: Date | null;
  /** the license the order issued (joined) */
  license_id: string | null;
}

const LICENSE_COLUMNS =
  "id, kind, owner_kind, owner_id, account_id, order_id, renews, customer, hosts, not_before, not_after, features, issued_at, key_id, file";
const ORDER_COLUMNS = `o.id, o.order_id, o.owner_kind, o.owner_id, o.account_id, o.customer, o.hosts, o.months, o.amount_krw,
  o.order_name, o.renew_of, o.status, o.payment_key, o.failure_code, o.failure_message, o.ledger_transaction_id,
  o.created_at, o.paid_at, (SELECT l.id FROM onprem_licenses l WHERE l.order_id = o.id) AS license_id`;

export async function insertLicense(q: Queryable, r: Omit<LicenseRow, "owner_kind" | "owner_id"> & { owner: Owner }) {
  const { rows } = await q.query<LicenseRow>(
    `INSERT INTO onprem_licenses (id, kind, owner_kind, owner_id, account_id, order_id, renews, customer, hosts,
       not_before, not_after, features, issued_at, key_id, file)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING ${LICENSE_COLUMNS}`,
    [
      r.id,
      r.kind,
      r.owner.kind,
      r.owner.id,
      r.account_id,
      r.order_id,
      r.renews,
      r.customer,
      r.hosts,
      r.not_before,
      r.not_after,
      r.features,
      r.issued_at,
      r.key_id,
      r.file,
    ],
  );
  return rows[0];
}

export async function findLicense(q: Queryable, id: string): Promise<LicenseRow | null> {
  return oneRow<LicenseRow>(q, `SELECT ${LICENSE_COLUMNS} FROM onprem_licenses WHERE id = $1`, [id]);
}

/** Licenses of any of the owners, newest first. */
export async function licensesOf(q: Queryable, owners: Owner[]): Promise<LicenseRow[]> {
  return allRows<LicenseRow>(
    q,
    `SELECT ${LICENSE_COLUMNS} FROM onprem_licenses
      WHERE (owner_kind, owner_id::text) IN (SELECT * FROM unnest($1::text[], $2::text[]))
      ORDER BY issued_at DESC, id DESC LIMIT 500`,
    [owners.map((o) => o.kind), owners.map((o) => o.id)],
  );
}

export async function insertOrder(
  q: Queryable,
  r: Pick<
    OrderRow,
    "id" | "order_id" | "account_id" | "customer" | "hosts" | "months" | "amount_krw" | "order_name" | "renew_of"
  > & { owner: Owner },
): Promise<OrderRow> {
  await q.query(
    `INSERT INTO onprem_orders (id, order_id, owner_kind, owner_id, account_id, customer, hosts, months, amount_krw,
       order_name, renew_of)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      r.id,
      r.order_id,
      r.owner.kind,
      r.owner.id,
      r.account_id,
      r.customer,
      r.hosts,
      r.months,
      r.amount_krw,
      r.order_name,
      r.renew_of,
    ],
  );
  return (await findOrder(q, r.id))!;
}

export async function findOrder(q: Queryable, id: string): Promise<OrderRow | null> {
  return oneRow<OrderRow>(q, `SELECT ${ORDER_COLUMNS} FROM onprem_orders o WHERE o.id = $1`, [id]);
}

/** The order under its row lock, held to the end of the transaction (confirms of one order take turns). */
export async function lockOrder(q: Queryable, id: string): Promise<OrderRow | null> {
  return oneRow<OrderRow>(q, `SELECT ${ORDER_COLUMNS} FROM onprem_orders o WHERE o.id = $1 FOR UPDATE`, [id]);
}

export async function markOrderPaid(
  q: Queryable,
  id: string,
  r: { paymentKey: string; ledgerTransactionId: string },
): Promise<void> {
  await q.query(
    `UPDATE onprem_orders SET status = 'paid', payment_key = $2, ledger_transaction_id = $3, paid_at = now(),
       failure_code = NULL, failure_message = NULL
     WHERE id = $1`,
    [id, r.paymentKey, r.ledgerTransactionId],
  );
}

export async function noteOrderFailure(q: Queryable, id: string, code: string, message: string): Promise<void> {
  await q.query(
    "UPDATE onprem_orders SET failure_code = $2, failure_message = $3 WHERE id = $1 AND status = 'pending'",
    [id, code, message],
  );
}
