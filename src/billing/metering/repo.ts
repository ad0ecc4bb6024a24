/**
 * Metering's SQL: usage records, carries and the wallets of the owners being charged. Billing's own
 * tables only; what is billable comes from the areas' metering sources (kernel/area.ts).
 */
import { allRows, type Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import { walletOwnerOf } from "../owner.js";

const METER_LOCK = 7_312_004;

/** Meters of one interval take turns batch by batch: what one reads as unmetered stays so until it commits. */
export async function lockInterval(q: Queryable, intervalStart: Date): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock($1, $2)", [METER_LOCK, Math.floor(intervalStart.getTime() / 1000 / 60)]);
}

/** Those of the ids that already have a record for the interval (index usage_records_once). */
export async function meteredAmong(q: Queryable, intervalStart: Date, ids: string[]): Promise<Set<string>> {
  const { rows } = await q.query<{ resource_id: string }>(
    "SELECT resource_id FROM usage_records WHERE resource_id = ANY($1::uuid[]) AND interval_start = $2",
    [ids, intervalStart],
  );
  return new Set(rows.map((r) => r.resource_id));
}

/** The KRW wallets of these owners (created on first use), keyed by `kind:id`. */
export async function ownerWallets(q: Queryable, owners: Owner[]): Promise<Map<string, string>> {
  const kinds = owners.map((o) => walletOwnerOf(o).kind);
  const ids = owners.map((o) => o.id);
  const find = () =>
    q.query<{ id: string; owner_kind: string; owner_id: string }>(
      `SELECT w.id, w.owner_kind, w.owner_id FROM ledger_wallets w JOIN unnest($1::text[], $2::text[]) AS o(k, i) ON w.owner_kind = o.k AND w.owner_id = o.i
      WHERE w.currency = 'KRW'`,
      [kinds, ids],
    );
  let { rows } = await find();
  if (rows.length < owners.length) {
    await q.query(
      `INSERT INTO ledger_wallets (id, owner_kind, owner_id, currency, policy, balance)
       SELECT gen_random_uuid(), k, i, 'KRW', 'prepaid', 0 FROM unnest($1::text[], $2::text[]) AS o(k, i)
       ON CONFLICT (owner_kind, owner_id, currency) DO NOTHING`,
      [kinds, ids],
    );
    ({ rows } = await find());
  }
  return new Map(rows.map((r) => [`${r.owner_kind}:${r.owner_id}`, r.id]));
}

/** Locks the carries of these wallets (in id order, creating missing ones at 0) and returns them. */
export async function lockCarries(q: Queryable, walletIds: string[]): Promise<Map<string, number>> {
  const { rows } = await q.query<{ wallet_id: string; micro: number }>(
    `INSERT INTO usage_carry AS c (wallet_id, micro) SELECT w, 0 FROM unnest($1::uuid[]) AS w ORDER BY w
     ON CONFLICT (wallet_id) DO UPDATE SET micro = c.micro RETURNING wallet_id, micro`,
    [[...walletIds].sort()],
  );
  return new Map(rows.map((r) => [r.wallet_id, r.micro]));
}

export async function setCarries(q: Queryable, walletIds: string[], micro: number[]): Promise<void> {
  await q.query(
    "UPDATE usage_carry c SET micro = v.m FROM unnest($1::uuid[], $2::bigint[]) AS v(w, m) WHERE c.wallet_id = v.w",
    [walletIds, micro],
  );
}

export interface UsageRecord {
  kind: string;
  resourceId: string;
  accountId: string;
  owner: Owner;
  walletId: string;
  size: string;
  state: string;
  storageGb: number;
  instanceMicro: number;
  storageMicro: number;
  transactionId: string | null;
}

/** A plain insert: under the interval lock these rows are new; a duplicate aborts the batch (usage_records_once). */
export async function insertUsageRecords(
  q: Queryable,
  intervalStart: Date,
  seconds: number,
  records: UsageRecord[],
): Promise<number> {
  const col = <T>(f: (r: UsageRecord) => T) => records.map(f);
  const { rowCount } = await q.query(
    `INSERT INTO usage_records (resource_kind, resource_id, account_id, owner_kind, owner_id, wallet_id, interval_start, interval_seconds, size, state, storage_gb, instance_micro, storage_micro, transaction_id)
     SELECT k, r, a, ok, oi, w, $1, $2, s, st, g, im, sm, t
       FROM unnest($3::text[], $4::uuid[], $5::uuid[], $6::text[], $7::uuid[], $8::uuid[], $9::text[], $10::text[], $11::int[], $12::bigint[], $13::bigint[], $14::uuid[])
         AS v(k, r, a, ok, oi, w, s, st, g, im, sm, t)`,
    [
      intervalStart,
      seconds,
      col((r) => r.kind),
      col((r) => r.resourceId),
      col((r) => r.accountId),
      col((r) => r.owner.kind),
      col((r) => r.owner.id),
      col((r) => r.walletId),
      col((r) => r.size),
      col((r) => r.state),
      col((r) => r.storageGb),
      col((r) => r.instanceMicro),
      col((r) => r.storageMicro),
      col((r) => r.transactionId),
    ],
  );
  return rowCount ?? 0;
}

// ---- overdue

/** Owners (of resources: accounts, organizations, partner children) whose prepaid KRW wallet is overdue past the grace period. */
export async function overdueOwners(q: Queryable, graceHours: number): Promise<Owner[]> {
  return allRows<{ kind: Owner["kind"]; id: string }>(
    q,
    `SELECT owner_kind AS kind, owner_id AS id FROM ledger_wallets
      WHERE owner_kind IN ('account', 'org', 'partner_child') AND currency = 'KRW' AND policy = 'prepaid'
        AND overdue_since < now() - $1 * interval '1 hour'
      ORDER BY owner_kind, owner_id`,
    [graceHours],
  );
}

export async function recordOverduePause(q: Queryable, owner: Owner): Promise<void> {
  await q.query("INSERT INTO billing_overdue_pauses (owner_kind, owner_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
    owner.kind,
    owner.id,
  ]);
}

/** Owners billing paused whose KRW wallet is no longer overdue (settled, or no longer prepaid). */
export async function settledPausedOwners(q: Queryable): Promise<Owner[]> {
  return allRows<{ kind: Owner["kind"]; id: string }>(
    q,
    `SELECT p.owner_kind AS kind, p.owner_id::text AS id FROM billing_overdue_pauses p
       LEFT JOIN ledger_wallets w ON w.owner_kind = p.owner_kind AND w.owner_id = p.owner_id::text AND w.currency = 'KRW'
      WHERE w.overdue_since IS NULL OR w.policy <> 'prepaid'
      ORDER BY p.owner_kind, p.owner_id`,
  );
}

export async function forgetOverduePause(q: Queryable, owner: Owner): Promise<void> {
  await q.query("DELETE FROM billing_overdue_pauses WHERE owner_kind = $1 AND owner_id = $2", [owner.kind, owner.id]);
}

// ---- usage reports (exact micro-won per owner)

export async function usageByDayAndKind(q: Queryable, owner: Owner, from: Date, to: Date) {
  return allRows<{ day: string; kind: string; instance: number; storage: number }>(
    q,
    `SELECT to_char(date_trunc('day', interval_start AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, resource_kind AS kind,
            sum(instance_micro)::bigint AS instance, sum(storage_micro)::bigint AS storage
       FROM usage_records WHERE owner_kind = $1 AND owner_id = $2 AND interval_start >= $3 AND interval_start < $4
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [owner.kind, owner.id, from, to],
  );
}

export async function usageByKind(q: Queryable, owner: Owner, from: Date, to: Date) {
  return allRows<{ kind: string; instance: number; storage: number }>(
    q,
    `SELECT resource_kind AS kind, sum(instance_micro)::bigint AS instance, sum(storage_micro)::bigint AS storage
       FROM usage_records WHERE owner_kind = $1 AND owner_id = $2 AND interval_start >= $3 AND interval_start < $4 GROUP BY 1 ORDER BY 1`,
    [owner.kind, owner.id, from, to],
  );
}

export async function usageByResource(q: Queryable, owner: Owner, from: Date, to: Date) {
  return allRows<{ kind: string; id: string; micro: number }>(
    q,
    `SELECT resource_kind AS kind, resource_id AS id, sum(instance_micro + storage_micro)::bigint AS micro
       FROM usage_records WHERE owner_kind = $1 AND owner_id = $2 AND interval_start >= $3 AND interval_start < $4
      GROUP BY 1, 2 ORDER BY micro DESC, id`,
    [owner.kind, owner.id, from, to],
  );
}

/** Exact micro-won the owner spent in [from, to), over every resource or only the given ones. */
export async function spentMicro(q: Queryable, owner: Owner, from: Date, to: Date, ids: string[] | null) {
  const { rows } = await q.query<{ micro: string | null }>(
    `SELECT sum(instance_micro + storage_micro)::bigint AS micro FROM usage_records
      WHERE owner_kind = $1 AND owner_id = $2 AND interval_start >= $3 AND interval_start < $4
        AND ($5::uuid[] IS NULL OR resource_id = ANY($5::uuid[]))`,
    [owner.kind, owner.id, from, to, ids],
  );
  return Number(rows[0]?.micro ?? 0);
}

/** Exact micro-won of the owner's usage in [from, to), of every creator or only the given ones (budgets). */
export async function spentByCreators(q: Queryable, owner: Owner, from: Date, to: Date, accountIds: string[] | null) {
  const { rows } = await q.query<{ micro: string | null }>({
    name: "usage-spent-by-creators",
    text: `SELECT sum(instance_micro + storage_micro)::bigint AS micro FROM usage_records
            WHERE owner_kind = $1 AND owner_id = $2 AND interval_start >= $3 AND interval_start < $4
              AND ($5::uuid[] IS NULL OR account_id = ANY($5::uuid[]))`,
    values: [owner.kind, owner.id, from, to, accountIds],
  });
  return Number(rows[0]?.micro ?? 0);
}
