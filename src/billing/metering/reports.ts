/**
 * Usage reports over usage_records (exact micro-won; *_krw fields are whole won rounded down) and the
 * burn rate of what holds resources now. Days and months are UTC.
 */
import type { Queryable } from "../../store/db.js";
import { databaseHourlyMicro, MICRO, prices, type PriceCatalog } from "../catalog.js";

export const krw = (micro: number) => Math.floor(micro / MICRO);

export interface KindUsage { kind: string; instance_microkrw: number; storage_microkrw: number; amount_microkrw: number; amount_krw: number }

const kindUsage = (kind: string, instance: number, storage: number): KindUsage => ({
  kind, instance_microkrw: instance, storage_microkrw: storage, amount_microkrw: instance + storage, amount_krw: krw(instance + storage),
});

/** Per UTC day (from <= day < to), per resource kind, with totals. */
export async function usageDaily(q: Queryable, accountId: string, from: Date, to: Date) {
  const { rows } = await q.query<{ day: string; kind: string; instance: number; storage: number }>(
    `SELECT to_char(date_trunc('day', interval_start AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, resource_kind AS kind,
            sum(instance_micro)::bigint AS instance, sum(storage_micro)::bigint AS storage
       FROM usage_records WHERE account_id = $1 AND interval_start >= $2 AND interval_start < $3
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [accountId, from, to],
  );
  const days = new Map<string, KindUsage[]>();
  for (const r of rows) {
    if (!days.has(r.day)) days.set(r.day, []);
    days.get(r.day)!.push(kindUsage(r.kind, r.instance, r.storage));
  }
  const totalMicro = rows.reduce((s, r) => s + r.instance + r.storage, 0);
  return {
    from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10), currency: "KRW" as const,
    days: [...days].map(([date, kinds]) => {
      const micro = kinds.reduce((s, k) => s + k.amount_microkrw, 0);
      return { date, kinds, total_microkrw: micro, total_krw: krw(micro) };
    }),
    total_microkrw: totalMicro, total_krw: krw(totalMicro),
  };
}

/** Micro-won per hour of everything the account holds now (running instances, kept storage). */
export async function burnRateMicro(q: Queryable, accountId: string, catalog: PriceCatalog = prices()): Promise<number> {
  const { rows } = await q.query<{ size: string; storage_gb: number; state: string }>(
    "SELECT size, storage_gb, state FROM databases WHERE account_id = $1 AND state IN ('running', 'paused')", [accountId]);
  return rows.reduce((s, r) => s + (catalog.resources.database.sizes[r.size] ? databaseHourlyMicro(catalog, r) : 0), 0);
}

export function monthBounds(now: Date): { start: Date; end: Date; period: string } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end, period: start.toISOString().slice(0, 7) };
}

/** Month to date by kind and per resource, and the projection to the month's end at the current burn rate. */
export async function monthToDate(q: Queryable, accountId: string, now: Date) {
  const { start, end, period } = monthBounds(now);
  const byKind = await q.query<{ kind: string; instance: number; storage: number }>(
    `SELECT resource_kind AS kind, sum(instance_micro)::bigint AS instance, sum(storage_micro)::bigint AS storage
       FROM usage_records WHERE account_id = $1 AND interval_start >= $2 AND interval_start < $3 GROUP BY 1 ORDER BY 1`,
    [accountId, start, end],
  );
  const perResource = await q.query<{ kind: string; id: string; name: string | null; micro: number }>(
    `SELECT u.resource_kind AS kind, u.resource_id AS id, d.name, sum(u.instance_micro + u.storage_micro)::bigint AS micro
       FROM usage_records u LEFT JOIN databases d ON d.id = u.resource_id
      WHERE u.account_id = $1 AND u.interval_start >= $2 AND u.interval_start < $3 GROUP BY 1, 2, 3 ORDER BY micro DESC, id`,
    [accountId, start, end],
  );
  const kinds = byKind.rows.map((r) => kindUsage(r.kind, r.instance, r.storage));
  const mtdMicro = kinds.reduce((s, k) => s + k.amount_microkrw, 0);
  const burn = await burnRateMicro(q, accountId);
  // the rest of the month at the current rate, from now to the first instant of next month
  const remainingMicro = Math.floor((burn * Math.max(0, end.getTime() - now.getTime())) / 3_600_000);
  return { period, start, end, kinds, mtdMicro, burnMicro: burn, projectedMicro: mtdMicro + remainingMicro, perResource: perResource.rows };
}
