import { allRows, anyRows, oneRow, type Queryable } from "../../store/db.js";
import type { Currency } from "../ledger/ledger.js";
import type { SecretBox } from "../../kernel/secrets.js";
import type { Owner } from "../../kernel/owner.js";
import type { Provider } from "./money.js";

/** Who pays (the owner: wallet, card, settings are the owner's) and who acts (the account, recorded beside it). */
export interface Payer {
  owner: Owner;
  accountId: string;
}

export type TopupStatus = "pending" | "succeeded" | "failed" | "refunded";

export interface TopupRow {
  id: string;
  account_id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  provider: Provider;
  currency: Currency;
  amount: number;
  credit_amount: number;
  origin: "manual" | "auto_recharge";
  status: TopupStatus;
  provider_ref: string | null;
  provider_status: string | null;
  order_id: string;
  client_secret: string | null;
  refunded_amount: number;
  failure_code: string | null;
  failure_message: string | null;
  credit_transaction_id: string | null;
  credited_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface CardRow {
  id: string;
  account_id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  provider: Provider;
  provider_ref: string;
  customer_ref: string;
  brand: string | null;
  last4: string | null;
  exp_month: number | null;
  exp_year: number | null;
  created_at: Date;
  deleted_at: Date | null;
}

export interface AutoRechargeRow {
  account_id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  enabled: boolean;
  currency: Currency;
  threshold: number;
  amount: number;
  in_flight_topup_id: string | null;
  consecutive_failures: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_error: string | null;
  updated_at: Date;
}

const TOPUP = `id, account_id, owner_kind, owner_id, provider, currency, amount, credit_amount, origin, status, provider_ref, provider_status, order_id,
  client_secret, refunded_amount, failure_code, failure_message, credit_transaction_id, credited_at, created_at, updated_at`;
const CARD =
  "id, account_id, owner_kind, owner_id, provider, provider_ref, customer_ref, brand, last4, exp_month, exp_year, created_at, deleted_at";
const AUTO =
  "account_id, owner_kind, owner_id, enabled, currency, threshold, amount, in_flight_topup_id, consecutive_failures, next_attempt_at, last_attempt_at, last_error, updated_at";

// ---- top-ups

export const topupOwner = (t: Pick<TopupRow, "owner_kind" | "owner_id">): Owner => ({
  kind: t.owner_kind,
  id: t.owner_id,
});

export async function insertTopup(
  q: Queryable,
  payer: Payer,
  t: Pick<TopupRow, "id" | "provider" | "currency" | "amount" | "credit_amount" | "origin" | "order_id">,
): Promise<TopupRow> {
  const { rows } = await q.query<TopupRow>(
    `INSERT INTO billing_topups (id, account_id, owner_kind, owner_id, provider, currency, amount, credit_amount, origin, order_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${TOPUP}`,
    [
      t.id,
      payer.accountId,
      payer.owner.kind,
      payer.owner.id,
      t.provider,
      t.currency,
      t.amount,
      t.credit_amount,
      t.origin,
      t.order_id,
    ],
  );
  return rows[0];
}

/** A top-up by id; with an owner, only that owner's. */
export async function findTopup(q: Queryable, id: string, owner?: Owner): Promise<TopupRow | null> {
  return oneRow<TopupRow>(
    q,
    `SELECT ${TOPUP} FROM billing_topups WHERE id = $1 AND ($2::text IS NULL OR (owner_kind = $2 AND owner_id = $3::uuid))`,
    [id, owner?.kind ?? null, owner?.id ?? null],
  );
}

export async function lockTopup(q: Queryable, id: string): Promise<TopupRow | null> {
  return oneRow<TopupRow>(q, `SELECT ${TOPUP} FROM billing_topups WHERE id = $1 FOR UPDATE`, [id]);
}

export async function findTopupByRef(q: Queryable, provider: Provider, ref: string): Promise<TopupRow | null> {
  return oneRow<TopupRow>(q, `SELECT ${TOPUP} FROM billing_topups WHERE provider = $1 AND provider_ref = $2`, [
    provider,
    ref,
  ]);
}

export async function findTopupByOrderId(q: Queryable, orderId: string): Promise<TopupRow | null> {
  return oneRow<TopupRow>(q, `SELECT ${TOPUP} FROM billing_topups WHERE order_id = $1`, [orderId]);
}

type TopupPatch = Partial<
  Pick<
    TopupRow,
    | "status"
    | "provider_ref"
    | "provider_status"
    | "client_secret"
    | "refunded_amount"
    | "failure_code"
    | "failure_message"
    | "credit_transaction_id"
    | "credited_at"
  >
>;

export async function updateTopup(q: Queryable, id: string, patch: TopupPatch): Promise<TopupRow> {
  const keys = Object.keys(patch) as (keyof TopupPatch)[];
  const sets = keys.map((k, i) => `${k} = $${i + 2}`);
  const { rows } = await q.query<TopupRow>(
    `UPDATE billing_topups SET ${[...sets, "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING ${TOPUP}`,
    [id, ...keys.map((k) => patch[k])],
  );
  return rows[0];
}

// ---- provider customers

export async function findCustomer(q: Queryable, owner: Owner, provider: Provider): Promise<string | null> {
  const { rows } = await q.query<{ customer_ref: string }>(
    "SELECT customer_ref FROM billing_provider_customers WHERE owner_kind = $1 AND owner_id = $2 AND provider = $3",
    [owner.kind, owner.id, provider],
  );
  return rows[0]?.customer_ref ?? null;
}

/** The payer a provider customer was created for (the account recorded is the one that created it). */
export async function findPayerByCustomer(
  q: Queryable,
  provider: Provider,
  customerRef: string,
): Promise<Payer | null> {
  const { rows } = await q.query<{ account_id: string; owner_kind: Owner["kind"]; owner_id: string }>(
    "SELECT account_id, owner_kind, owner_id FROM billing_provider_customers WHERE provider = $1 AND customer_ref = $2",
    [provider, customerRef],
  );
  return rows[0] ? { accountId: rows[0].account_id, owner: { kind: rows[0].owner_kind, id: rows[0].owner_id } } : null;
}

/** Keeps the first customer recorded for the owner (a concurrent creator gets that one back). */
export async function saveCustomer(
  q: Queryable,
  payer: Payer,
  provider: Provider,
  customerRef: string,
): Promise<string> {
  await q.query(
    "INSERT INTO billing_provider_customers (account_id, owner_kind, owner_id, provider, customer_ref) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
    [payer.accountId, payer.owner.kind, payer.owner.id, provider, customerRef],
  );
  return (await findCustomer(q, payer.owner, provider))!;
}

// ---- cards

/**
 * A card's provider reference (a Toss billing key charges the card by itself) is sealed at rest under
 * the platform key (kernel/secrets.ts); rows leave this file with it opened.
 */
const CARD_REF = "billing_cards.provider_ref";
const openCard = (box: SecretBox, row: CardRow): CardRow => ({
  ...row,
  provider_ref: box.open(row.provider_ref, CARD_REF),
});

export async function liveCard(q: Queryable, owner: Owner, box: SecretBox, lock = false): Promise<CardRow | null> {
  const { rows } = await q.query<CardRow>(
    `SELECT ${CARD} FROM billing_cards WHERE owner_kind = $1 AND owner_id = $2 AND deleted_at IS NULL ${lock ? "FOR UPDATE" : ""}`,
    [owner.kind, owner.id],
  );
  return rows[0] ? openCard(box, rows[0]) : null;
}

/** True when this provider reference was saved for the owner once and deleted since (compared opened: ciphertexts differ). */
export async function cardWasDeleted(
  q: Queryable,
  owner: Owner,
  provider: Provider,
  ref: string,
  box: SecretBox,
): Promise<boolean> {
  const { rows } = await q.query<{ provider_ref: string }>(
    "SELECT provider_ref FROM billing_cards WHERE owner_kind = $1 AND owner_id = $2 AND provider = $3 AND deleted_at IS NOT NULL",
    [owner.kind, owner.id, provider],
  );
  return rows.some((r) => box.open(r.provider_ref, CARD_REF) === ref);
}

export async function insertCard(
  q: Queryable,
  payer: Payer,
  c: Omit<CardRow, "account_id" | "owner_kind" | "owner_id" | "created_at" | "deleted_at">,
  box: SecretBox,
): Promise<CardRow> {
  const { rows } = await q.query<CardRow>(
    `INSERT INTO billing_cards (id, account_id, owner_kind, owner_id, provider, provider_ref, customer_ref, brand, last4, exp_month, exp_year)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${CARD}`,
    [
      c.id,
      payer.accountId,
      payer.owner.kind,
      payer.owner.id,
      c.provider,
      box.seal(c.provider_ref, CARD_REF),
      c.customer_ref,
      c.brand,
      c.last4,
      c.exp_month,
      c.exp_year,
    ],
  );
  return openCard(box, rows[0]);
}

export async function markCardDeleted(q: Queryable, cardId: string): Promise<void> {
  await q.query("UPDATE billing_cards SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL", [cardId]);
}

// ---- auto-recharge

export const settingsOwner = (a: Pick<AutoRechargeRow, "owner_kind" | "owner_id">): Owner => ({
  kind: a.owner_kind,
  id: a.owner_id,
});

export async function findAutoRecharge(q: Queryable, owner: Owner, lock = false): Promise<AutoRechargeRow | null> {
  return oneRow<AutoRechargeRow>(
    q,
    `SELECT ${AUTO} FROM billing_auto_recharge WHERE owner_kind = $1 AND owner_id = $2 ${lock ? "FOR UPDATE" : ""}`,
    [owner.kind, owner.id],
  );
}

/** New settings start afresh: failures and back-off are forgotten (a charge under way stays marked). */
export async function upsertAutoRecharge(
  q: Queryable,
  payer: Payer,
  a: Pick<AutoRechargeRow, "enabled" | "currency" | "threshold" | "amount">,
): Promise<AutoRechargeRow> {
  const { rows } = await q.query<AutoRechargeRow>(
    `INSERT INTO billing_auto_recharge (account_id, owner_kind, owner_id, enabled, currency, threshold, amount) VALUES ($1, $6, $7, $2, $3, $4, $5)
     ON CONFLICT (owner_kind, owner_id) DO UPDATE SET account_id = EXCLUDED.account_id, enabled = EXCLUDED.enabled, currency = EXCLUDED.currency, threshold = EXCLUDED.threshold,
       amount = EXCLUDED.amount, consecutive_failures = 0, next_attempt_at = NULL, last_error = NULL, updated_at = now()
     RETURNING ${AUTO}`,
    [payer.accountId, a.enabled, a.currency, a.threshold, a.amount, payer.owner.kind, payer.owner.id],
  );
  return rows[0];
}

export async function disableAutoRecharge(q: Queryable, owner: Owner): Promise<void> {
  await q.query(
    "UPDATE billing_auto_recharge SET enabled = false, updated_at = now() WHERE owner_kind = $1 AND owner_id = $2",
    [owner.kind, owner.id],
  );
}

/** Accounts whose auto-recharge may charge now: enabled, a live card, nothing in flight, not backing off. */
export async function dueAutoRecharges(q: Queryable, limit: number): Promise<AutoRechargeRow[]> {
  return allRows<AutoRechargeRow>(
    q,
    `SELECT ${AUTO.split(", ")
      .map((c) => `a.${c}`)
      .join(", ")} FROM billing_auto_recharge a
      WHERE a.enabled AND a.in_flight_topup_id IS NULL AND (a.next_attempt_at IS NULL OR a.next_attempt_at <= now())
        AND EXISTS (SELECT 1 FROM billing_cards c WHERE c.owner_kind = a.owner_kind AND c.owner_id = a.owner_id AND c.deleted_at IS NULL)
      ORDER BY a.owner_kind, a.owner_id LIMIT $1`,
    [limit],
  );
}

/** The in-flight marker: set only when none is set, so one charge at a time per owner. */
export async function claimAutoRecharge(q: Queryable, owner: Owner, topupId: string): Promise<boolean> {
  return anyRows(
    q,
    `UPDATE billing_auto_recharge SET in_flight_topup_id = $2, last_attempt_at = now()
      WHERE owner_kind = $3 AND owner_id = $1 AND enabled AND in_flight_topup_id IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= now())`,
    [owner.id, topupId, owner.kind],
  );
}

export async function releaseAutoRechargeSuccess(q: Queryable, topupId: string): Promise<void> {
  await q.query(
    `UPDATE billing_auto_recharge SET in_flight_topup_id = NULL, consecutive_failures = 0, next_attempt_at = NULL, last_error = NULL
      WHERE in_flight_topup_id = $1`,
    [topupId],
  );
}

export async function releaseAutoRechargeFailure(
  q: Queryable,
  topupId: string,
  error: string,
  baseSeconds: number,
  maxSeconds: number,
): Promise<void> {
  await q.query(
    `UPDATE billing_auto_recharge SET in_flight_topup_id = NULL, consecutive_failures = consecutive_failures + 1, last_error = $2,
        next_attempt_at = now() + least($4::bigint, $3::bigint * power(2, least(consecutive_failures, 30))::bigint) * interval '1 second'
      WHERE in_flight_topup_id = $1`,
    [topupId, error, baseSeconds, maxSeconds],
  );
}

/** Charges marked in flight for longer than this: their outcome is looked up again. */
export async function staleInFlight(q: Queryable, olderThanSeconds: number): Promise<{ in_flight_topup_id: string }[]> {
  return allRows<{ in_flight_topup_id: string }>(
    q,
    `SELECT in_flight_topup_id FROM billing_auto_recharge
      WHERE in_flight_topup_id IS NOT NULL AND last_attempt_at < now() - $1 * interval '1 second'`,
    [olderThanSeconds],
  );
}

// ---- webhook events

/** Records a provider event; false when it was recorded before (a redelivery). */
export async function recordWebhookEvent(
  q: Queryable,
  provider: Provider,
  eventId: string,
  type: string,
): Promise<boolean> {
  return anyRows(
    q,
    "INSERT INTO billing_webhook_events (provider, event_id, type) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
    [provider, eventId, type],
  );
}
