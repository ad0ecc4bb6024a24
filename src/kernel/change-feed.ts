import pg from "pg";
import type { FastifyBaseLogger } from "fastify";
import { listen } from "../store/db.js";

const CHANNEL = "owner_changed";

/**
 * Which owners' resources changed, across every process: resource tables carry a trigger
 * (`notify_owner_change`, migration 010) that NOTIFYs `<owner_kind>:<owner_id>` on every row change,
 * delivered at commit. Read caches keyed by owner drop their entries on it, so a list served from
 * memory is never older than the last committed change plus the NOTIFY's delivery (milliseconds).
 * While the listener is down nothing may be cached: `live` is false and caches bypass themselves.
 */
export class OwnerChangeFeed {
  private listener: pg.Client | null = null;
  private closed = false;
  private readonly subscribers = new Set<(ownerKey: string | null) => void>();
  live = false;

  constructor(
    private connectionString: string,
    private log: FastifyBaseLogger,
  ) {}

  /** null means "everything may have changed" (the listener was lost) */
  subscribe(fn: (ownerKey: string | null) => void): void {
    this.subscribers.add(fn);
  }

  /** This process's own writes: subscribers hear at once, before the NOTIFY comes back. */
  changed(ownerKey: string): void {
    for (const fn of this.subscribers) fn(ownerKey);
  }

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on("error", (err) => this.lost(err));
    client.on("end", () => this.lost(new Error("connection ended")));
    client.on("notification", (msg) => this.changed(msg.payload ?? ""));
    try {
      await client.connect();
      await listen(client, CHANNEL);
      this.listener = client;
      this.live = true;
    } catch (err) {
      this.lost(err as Error);
    }
  }

  private lost(err: Error): void {
    const wasLive = this.live || this.listener !== null;
    this.live = false;
    const old = this.listener;
    this.listener = null;
    old?.removeAllListeners();
    old?.end().catch(() => {});
    for (const fn of this.subscribers) fn(null);
    if (this.closed) return;
    if (wasLive)
      this.log.warn({ err: err.message }, "owner change listener lost; read caches bypassed until it reconnects");
    setTimeout(() => void this.start(), 1000).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    await this.listener?.end().catch(() => {});
  }
}

/**
 * A per-owner read cache over the change feed. A load that overlaps a change is not stored (the
 * owner's version moved while it ran), so a stale read never outlives the change that made it stale.
 */
export class OwnerReadCache<T> {
  private readonly entries = new Map<string, Map<string, T>>();
  private readonly versions = new Map<string, number>();

  constructor(
    private feed: OwnerChangeFeed,
    private maxOwners = 10_000,
  ) {
    feed.subscribe((ownerKey) => {
      if (ownerKey === null) {
        this.entries.clear();
        this.versions.clear();
        return;
      }
      this.entries.delete(ownerKey);
      this.versions.set(ownerKey, (this.versions.get(ownerKey) ?? 0) + 1);
    });
  }

  async get(ownerKey: string, key: string, load: () => Promise<T>): Promise<T> {
    if (!this.feed.live) return load();
    const hit = this.entries.get(ownerKey)?.get(key);
    if (hit !== undefined) return hit;
    const version = this.versions.get(ownerKey) ?? 0;
    const value = await load();
    if (this.feed.live && (this.versions.get(ownerKey) ?? 0) === version) {
      if (this.entries.size >= this.maxOwners) this.entries.clear();
      let forOwner = this.entries.get(ownerKey);
      if (!forOwner) this.entries.set(ownerKey, (forOwner = new Map()));
      forOwner.set(key, value);
    }
    return value;
  }
}
