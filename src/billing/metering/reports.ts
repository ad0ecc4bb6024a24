/**
 * Usage reports over usage_records (exact micro-won; *_krw fields are whole won rounded down) and the
 * burn rate of what an owner holds now, as every area's metering source reports it. Days and months are UTC.
 */
import type { Queryable } from "../../store/db.js";
import type { MeteringSource } from "../../kernel/area.js";
import type { Owner } from "../../kernel/owner.js";
import { hourlyMicro, MICRO, prices, type PriceCatalog } from "../catalog.js";
import * as repo from "./repo.js";

export const krw = (micro: number) => Math.floor(micro / MICRO);

export interface KindUsage {
  kind: string;
  instance_microkrw: number;
  storage_microkrw: number;
  amount_microkrw: number;
  amount_krw: number;
}

const kindUsage = (kind: string, instance: number, storage: number): KindUsage => ({
  kind,
  instance_microkrw: instance,
  storage_microkrw: storage,
  amount_microkrw: instance + storage,
  amount_krw: krw(instance + storage),
});

/** Per UTC day (from <= day < to), per resource kind, with totals. */
export async function usageDaily(q: Queryable, owner: Owner, from: Date, to: Date) {
  const rows = await repo.usageByDayAndKind(q, owner, from, to);
  const days = new Map<string, KindUsage[]>();
  for (const r of rows) {
    if (!days.has(r.day)) days.set(r.day, []);
    days.get(r.day)!.push(kindUsage(r.kind, r.instance, r.storage));
  }
  const totalMicro = rows.reduce((s, r) => s + r.instance + r.storage, 0);
  return {
    from: from.toISOString().slice(0, 10),
    to: to.toISOString().slice(0, 10),
    currency: "KRW" as const,
    days: [...days].map(([date, kinds]) => {
      const micro = kinds.reduce((s, k) => s + k.amount_microkrw, 0);
      return { date, kinds, total_microkrw: micro, total_krw: krw(micro) };
    }),
    total_microkrw: totalMicro,
    total_krw: krw(totalMicro),
  };
}

/** Micro-won per hour of everything the owner holds now (running instances, kept storage), over every source. */
export async function burnRateMicro(
  q: Queryable,
  sources: readonly MeteringSource[],
  owner: Owner,
  catalog: PriceCatalog = prices(),
): Promise<number> {
  let micro = 0;
  for (const source of sources) {
    for (const r of await source.billableOf(q, owner)) micro += hourlyMicro(catalog, source.kind, r);
  }
  return micro;
}

export function monthBounds(now: Date): { start: Date; end: Date; period: string } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end, period: start.toISOString().slice(0, 7) };
}

/** Month to date by kind and per resource (named by its source), and the projection to the month's end at the current burn rate. */
export async function monthToDate(q: Queryable, sources: readonly MeteringSource[], owner: Owner, now: Date) {
  const { start, end, period } = monthBounds(now);
  const kinds = (await repo.usageByKind(q, owner, start, end)).map((r) => kindUsage(r.kind, r.instance, r.storage));
  const resources = await repo.usageByResource(q, owner, start, end);
  const names = new Map<string, string>();
  for (const source of sources) {
    const ids = resources.filter((r) => r.kind === source.kind).map((r) => r.id);
    if (!ids.length || !source.describe) continue;
    for (const [id, d] of await source.describe(q, ids)) names.set(`${source.kind}:${id}`, d.name);
  }
  const perResource = resources.map((r) => ({ ...r, name: names.get(`${r.kind}:${r.id}`) ?? null }));
  const mtdMicro = kinds.reduce((s, k) => s + k.amount_microkrw, 0);
  const burn = await burnRateMicro(q, sources, owner);
  // the rest of the month at the current rate, from now to the first instant of next month
  const remainingMicro = Math.floor((burn * Math.max(0, end.getTime() - now.getTime())) / 3_600_000);
  return {
    period,
    start,
    end,
    kinds,
    mtdMicro,
    burnMicro: burn,
    projectedMicro: mtdMicro + remainingMicro,
    perResource,
  };
}
