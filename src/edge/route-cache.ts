import type { EdgeTarget } from "../kernel/area.js";

/** What a host resolved to, and which route source answered (its NOTIFY channel drops the entry). */
export interface Resolved {
  target: EdgeTarget | null;
  /** the channel of the source that answered; null for an unknown host (dropped by every channel) */
  channel: string | null;
}

interface Entry extends Resolved {
  expires: number;
}

export interface RouteCacheOptions {
  ttlMs: number;
  negativeTtlMs: number;
  /** while false (the NOTIFY listener is down) nothing is cached: every request asks the sources */
  live: () => boolean;
  maxEntries?: number;
}

/**
 * Routes by host name, from the route sources, kept a few seconds and dropped as soon as a source announces
 * a change on its channel. A load that overlaps a change is handed to its callers but not stored, so a stale
 * answer never outlives the NOTIFY that made it stale. Concurrent misses for one host share one load.
 */
export class RouteCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Resolved>>();
  private generation = 0;

  constructor(
    private readonly load: (host: string) => Promise<Resolved>,
    private readonly opts: RouteCacheOptions,
  ) {}

  /** `fresh`: skip the cache (a retry after an upstream failed), still storing what it finds */
  async get(host: string, fresh = false): Promise<Resolved> {
    const live = this.opts.live();
    if (live && !fresh) {
      const hit = this.entries.get(host);
      if (hit && hit.expires > Date.now()) return hit;
      const pending = this.loading.get(host);
      if (pending) return pending;
    }
    const generation = this.generation;
    const pending = this.load(host).then((resolved) => {
      if (this.opts.live() && this.generation === generation) this.store(host, resolved);
      return resolved;
    });
    if (!fresh) {
      this.loading.set(host, pending);
      void pending.then(
        () => this.loading.get(host) === pending && this.loading.delete(host),
        () => this.loading.get(host) === pending && this.loading.delete(host),
      );
    }
    return pending;
  }

  /** A fresh cached answer, without waiting (undefined: ask `get`). */
  peek(host: string): Resolved | undefined {
    const hit = this.entries.get(host);
    return hit && hit.expires > Date.now() && this.opts.live() ? hit : undefined;
  }

  private store(host: string, resolved: Resolved): void {
    const ttl = resolved.target ? this.opts.ttlMs : this.opts.negativeTtlMs;
    if (ttl <= 0) return;
    if (this.entries.size >= (this.opts.maxEntries ?? 100_000)) this.entries.clear();
    this.entries.set(host, { ...resolved, expires: Date.now() + ttl });
  }

  /**
   * A source announced a change on `channel` (null: anything may have changed, e.g. the listener was lost).
   * Its answers and every unknown host go (a new app may now answer a host that was unknown); the payload is
   * not trusted to name the host, since one change can move several (a pod and the group it belongs to).
   */
  invalidate(channel: string | null): void {
    this.generation++;
    this.loading.clear();
    if (channel === null) {
      this.entries.clear();
      return;
    }
    for (const [host, entry] of this.entries)
      if (entry.channel === channel || entry.channel === null) this.entries.delete(host);
  }

  /** one host's entry (an upstream of it just failed) */
  drop(host: string): void {
    this.entries.delete(host);
  }
}
