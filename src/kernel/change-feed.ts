import type { FastifyBaseLogger } from "fastify";
import { ReconnectingListener } from "../store/listener.js";

const CHANNEL = "owner_changed";

/**
 * Which owners' resources changed, across every process: resource tables carry a trigger
 * (`notify_owner_change`, migration 010) that NOTIFYs `<owner_kind>:<owner_id>` on every row change,
 * delivered at commit. Read caches keyed by owner drop their entries on it, so a list served from
 * memory is never older than the last committed change plus the NOTIFY's delivery (milliseconds).
 * While the listener is down nothing may be cached: `live` is false and caches bypass themselves.
 */
export class OwnerChangeFeed {
  private readonly subscribers = new Set<(ownerKey: string | null) => void>();
  private readonly listener: ReconnectingListener;

  constructor(connectionString: string, log: FastifyBaseLogger) {
    this.listener = new ReconnectingListener({
      connectionString,
      channels: [CHANNEL],
      log,
      lostMessage: "owner change listener lost; read caches bypassed until it reconnects",
      onNotification: (_channel, payload) => this.changed(payload),
      onLost: () => {
        for (const fn of this.subscribers) fn(null);
      },
    });
  }

  /** listening now: caches may keep what they load */
  get live(): boolean {
    return this.listener.live;
  }

  /** null means "everything may have changed" (the listener was lost) */
  subscribe(fn: (ownerKey: string | null) => void): void {
    this.subscribers.add(fn);
  }

  /** This process's own writes: subscribers hear at once, before the NOTIFY comes back. */
  changed(ownerKey: string): void {
    for (const fn of this.subscribers) fn(ownerKey);
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  close(): Promise<void> {
    return this.listener.close();
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
