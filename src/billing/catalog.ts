/**
 * The price catalog (catalog/prices.json): per resource kind and size, a price per running hour in whole
 * KRW, and storage per GB-hour in micro-won (1 KRW = 1,000,000 micro-won; storage costs fractions of a
 * won). Storage is charged while the resource keeps its data (running or paused), the instance price
 * only while it runs. The dev size is free (0 and 0).
 *
 * Metering works in fixed intervals of `meter_interval_seconds` (default 300, dividing an hour). Start-up
 * refuses a catalog whose price of one interval isn't a whole number of micro-won, so no interval is ever
 * rounded: the only rounding in billing is the charge of whole won, whose remainder is carried (see
 * metering/meter.ts).
 */
import { readFileSync } from "node:fs";
import { Type, type Static } from "@sinclair/typebox";
import { Ajv } from "ajv";

export const MICRO = 1_000_000;

const SizePrice = Type.Object(
  {
    krw_per_hour: Type.Integer({ minimum: 0 }),
    storage_microkrw_per_gb_hour: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export const PriceCatalog = Type.Object({
  currency: Type.Literal("KRW"),
  meter_interval_seconds: Type.Integer({ minimum: 60, maximum: 3600 }),
  /** per resource kind (a metering source's kind: database, pod, bucket, ...), its sizes */
  resources: Type.Record(Type.String(), Type.Object({ sizes: Type.Record(Type.String(), SizePrice) })),
});
export type PriceCatalog = Static<typeof PriceCatalog>;
export type SizePrice = Static<typeof SizePrice>;

export const DEFAULT_PRICES_FILE = new URL("../../catalog/prices.json", import.meta.url);

export function loadPriceCatalog(file: string | URL = DEFAULT_PRICES_FILE): PriceCatalog {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`configuration error: price catalog ${String(file)} cannot be read: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const validate = new Ajv({ strict: false }).compile(PriceCatalog);
  if (!validate(parsed)) {
    const first = validate.errors?.[0];
    throw new Error(
      `configuration error: price catalog ${String(file)} is invalid at ${first?.instancePath}: ${first?.message}`,
    );
  }
  const c = parsed as PriceCatalog;
  const secs = c.meter_interval_seconds;
  if (3600 % secs !== 0) throw new Error(`configuration error: meter_interval_seconds ${secs} must divide an hour`);
  for (const [kind, { sizes }] of Object.entries(c.resources)) {
    for (const [size, p] of Object.entries(sizes)) {
      for (const perHourMicro of [p.krw_per_hour * MICRO, p.storage_microkrw_per_gb_hour]) {
        if ((perHourMicro * secs) % 3600 !== 0) {
          throw new Error(
            `configuration error: price of ${kind} size ${size} over ${secs} s is not a whole number of micro-won`,
          );
        }
      }
    }
  }
  return c;
}

let cached: PriceCatalog | null = null;
/** The catalog of this process, read once. */
export function prices(): PriceCatalog {
  return (cached ??= loadPriceCatalog());
}

export interface IntervalPrice {
  instance_micro: number;
  storage_micro: number;
}

/** What a price depends on: the size, the storage kept and whether it runs. */
export interface Priced {
  size: string;
  storageGb: number;
  state: string;
}

/** The catalog entry of a kind and size, or null when the catalog does not price it. */
export function priceOf(c: PriceCatalog, kind: string, size: string): SizePrice | null {
  return Object.hasOwn(c.resources, kind) && Object.hasOwn(c.resources[kind].sizes, size)
    ? c.resources[kind].sizes[size]
    : null;
}

/**
 * Exact micro-won of one resource over `seconds` (a whole number of intervals) in the given state: the
 * instance price while running, storage while running or paused. A size the catalog does not price is
 * an error (metering a resource at 0 by mistake would be silent).
 */
export function charge(c: PriceCatalog, kind: string, r: Priced, seconds = c.meter_interval_seconds): IntervalPrice {
  const p = priceOf(c, kind, r.size);
  if (!p) throw new Error(`no price for ${kind} size ${r.size}`);
  const running = r.state === "running";
  const keepsData = running || r.state === "paused";
  return {
    instance_micro: running ? (p.krw_per_hour * MICRO * seconds) / 3600 : 0,
    storage_micro: keepsData ? (p.storage_microkrw_per_gb_hour * r.storageGb * seconds) / 3600 : 0,
  };
}

/** Micro-won per hour of one resource in its state (the burn rate); 0 for sizes the catalog does not price. */
export function hourlyMicro(c: PriceCatalog, kind: string, r: Priced): number {
  if (!priceOf(c, kind, r.size)) return 0;
  const x = charge(c, kind, r, 3600);
  return x.instance_micro + x.storage_micro;
}

/** Whether creating this kind and size costs money (a paid resource needs a balance). */
export function isPaid(c: PriceCatalog, kind: string, size: string, storageGb = 1): boolean {
  const p = priceOf(c, kind, size);
  return !!p && (p.krw_per_hour > 0 || p.storage_microkrw_per_gb_hour * storageGb > 0);
}
