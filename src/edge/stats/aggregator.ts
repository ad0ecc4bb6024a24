import type { FastifyBaseLogger } from "fastify";
import { isUuid } from "../../store/db.js";
import type { EdgeObservation } from "../contract.js";
import type { EdgeTarget } from "../../kernel/contracts.js";
import { bucketOf } from "./histogram.js";
import { addCounts, countRequest, zeroCounts, type CountsOf } from "./counts.js";
import type { MinuteRow, StatsRow } from "./repo.js";

export interface AggregatorOptions {
  /** EDGE_STATS_FLUSH_MS: how often counts go to the store (and so at most how much a crash loses) */
  flushMs: number;
  /** adds one flush's rows to the store (repo.addStats, and the per-minute rows of issue 31's metrics with them, in
   * one transaction); a throw keeps them for the next flush */
  write: (rows: StatsRow[], minutes: MinuteRow[]) => Promise<void>;
  log: FastifyBaseLogger;
  /** apps × days held in memory at most; beyond it new keys are dropped (counted in `dropped`) */
  maxKeys?: number;
  now?: () => number;
  /** false (EDGE_METRICS=off): no per-minute rows, only the daily ones */
  minutes?: boolean;
  /** counts gathered elsewhere (the nginx data plane's own answers), taken in at the start of every flush */
  collect?: () => Promise<CountsOf[]>;
}

/** the key of an app's row of one span (a UTC day, or a minute's epoch ms) in the maps held */
const spanKey = (t: { kind: string; id: string }, span: string | number): string =>
  `${t.kind}\u0000${t.id}\u0000${span}`;

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Per-app, per-day counts of what the edge answered, kept in memory and added to the store every `flushMs` in one
 * statement (no write per request). Only requests routed to an app count (an unknown host's 404 names none).
 *
 * Losses: a crash loses what arrived since the last successful flush, at most one flush interval while the store
 * answers. A failed flush puts its counts back, merged with what arrived meanwhile, for the next flush; while the
 * store stays down memory is bounded by `maxKeys` apps × days (new keys beyond it are dropped and counted; keys
 * already held keep counting). A stop (shutdown after the listener drained) flushes once more.
 */
export class StatsAggregator {
  private pending = new Map<string, StatsRow>();
  /** per-app, per-minute counts (metrics, src/metrics), flushed with the daily ones; bounded by maxKeys too */
  private minutes = new Map<string, MinuteRow>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly maxKeys: number;
  private readonly now: () => number;
  /** observations not counted because memory was full (apps × days beyond maxKeys) */
  dropped = 0;
  private day = "";
  private dayStart = -Infinity;
  /** flushes that failed (their counts were kept) */
  failures = 0;

  constructor(private readonly opts: AggregatorOptions) {
    this.maxKeys = opts.maxKeys ?? 50_000;
    this.now = opts.now ?? Date.now;
  }

  /** Counts one answered request (Edge.observe). */
  record(o: EdgeObservation): void {
    const t = o.target;
    if (!t) return;
    const now = this.now();
    const day = this.today(now);
    const key = spanKey(t, day);
    const held = this.pending.get(key);
    // ids and owners are store ids (uuid); a target of another shape (a test's) cannot be stored. Checked when a
    // row is made and when its owner object changes (a reloaded route), not on every request
    if ((!held || held.owner !== t.owner) && (!isUuid(t.id) || !isUuid(t.owner.id))) return;
    const row = held ?? this.newDay(key, t, day);
    if (!row) {
      this.dropped++;
      return;
    }
    row.owner = t.owner;
    const bucket = bucketOf(o.ms);
    countRequest(row, o.status, bucket, o.bytes);
    row.lastAt = now;
    if (this.opts.minutes === false) return;
    // beyond maxKeys the daily row counted it; only the minute detail is lost
    const m = this.minuteOf(row, now - (now % 60_000));
    if (m) countRequest(m, o.status, bucket, o.bytes);
  }

  /** Adds one app's counts of one minute (nginx's answers), into its day's row and its minute's. */
  add(c: CountsOf): void {
    const t = c.target;
    if (!isUuid(t.id) || !isUuid(t.owner.id) || c.requests <= 0) return;
    const day = utcDay(c.minute);
    const key = spanKey(t, day);
    const row = this.pending.get(key) ?? this.newDay(key, t, day);
    if (!row) {
      this.dropped += c.requests;
      return;
    }
    row.owner = t.owner;
    addCounts(row, c);
    row.lastAt = Math.max(row.lastAt ?? 0, Math.min(this.now(), c.minute + 59_999));
    if (this.opts.minutes === false) return;
    const m = this.minuteOf(t, c.minute);
    if (m) addCounts(m, c);
  }

  /** A new, empty day row of an app, held under `key`; undefined when memory is full (maxKeys). */
  private newDay(key: string, t: EdgeTarget, day: string): StatsRow | undefined {
    if (this.pending.size >= this.maxKeys) return undefined;
    const row: StatsRow = { kind: t.kind, id: t.id, day, owner: t.owner, ...zeroCounts() };
    this.pending.set(key, row);
    return row;
  }

  /** An app's row of one minute (made empty when new), its owner the newest; undefined when memory is full. */
  private minuteOf(t: Pick<MinuteRow, "kind" | "id" | "owner">, minute: number): MinuteRow | undefined {
    const key = spanKey(t, minute);
    let m = this.minutes.get(key);
    if (!m) {
      if (this.minutes.size >= this.maxKeys) return undefined;
      m = { kind: t.kind, id: t.id, minute, owner: t.owner, ...zeroCounts() };
      this.minutes.set(key, m);
    }
    m.owner = t.owner;
    return m;
  }

  /** the UTC day of now, its string made once per day (not per request) */
  private today(now: number): string {
    if (now < this.dayStart || now >= this.dayStart + 86_400_000) {
      this.dayStart = now - (now % 86_400_000);
      this.day = utcDay(now);
    }
    return this.day;
  }

  /** Flushes every `flushMs` until stop. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.opts.flushMs);
    this.timer.unref();
  }

  /**
   * Writes what is held now; resolves when that is stored or, on failure, put back for the next flush (never
   * rejects). A flush asked for while one runs waits for it and then runs again (what arrived meanwhile).
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.opts.collect) {
      const counted = await this.opts.collect().catch((err) => {
        this.opts.log.warn({ err }, "edge statistics of the data plane could not be collected; next flush");
        return [];
      });
      for (const c of counted) this.add(c);
    }
    if (!this.pending.size && !this.minutes.size) return;
    const batch = this.pending;
    const minutes = this.minutes;
    this.pending = new Map();
    this.minutes = new Map();
    this.flushing = this.opts
      .write([...batch.values()], [...minutes.values()])
      .catch((err) => {
        this.failures++;
        this.restore(batch);
        this.restoreMinutes(minutes);
        this.opts.log.warn(
          { err, rows: batch.size, held: this.pending.size },
          "edge statistics flush failed; counts kept for the next flush",
        );
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
  }

  /** Puts a failed batch back under what arrived since (its keys first), within maxKeys. */
  private restore(batch: Map<string, StatsRow>): void {
    const merged = new Map<string, StatsRow>();
    for (const [key, row] of batch) {
      const newer = this.pending.get(key);
      if (newer) {
        row.owner = newer.owner;
        addCounts(row, newer);
        if (newer.lastAt !== undefined) row.lastAt = Math.max(row.lastAt ?? 0, newer.lastAt);
      }
      merged.set(key, row);
    }
    for (const [key, row] of this.pending) {
      if (merged.has(key)) continue;
      if (merged.size >= this.maxKeys) {
        this.dropped += row.requests;
        continue;
      }
      merged.set(key, row);
    }
    this.pending = merged;
  }

  /** Puts a failed batch's minutes back, merged with what arrived since, within maxKeys. */
  private restoreMinutes(batch: Map<string, MinuteRow>): void {
    for (const [key, newer] of this.minutes) {
      const row = batch.get(key);
      if (!row) {
        if (batch.size < this.maxKeys) batch.set(key, newer);
        continue;
      }
      row.owner = newer.owner;
      addCounts(row, newer);
    }
    this.minutes = batch;
  }

  /** Apps × days held in memory now (not yet stored). */
  get held(): number {
    return this.pending.size;
  }

  /** Stops the timer and flushes what is left once (the listener has drained: nothing more arrives). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
