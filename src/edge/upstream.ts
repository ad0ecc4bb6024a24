import { Pool } from "undici";

/** connections per upstream address at most; requests beyond them wait in the pool's queue */
const CONNECTIONS = 256;
/** idle upstream connections close before a typical server's 5 s keep-alive does, so none is reused as it closes */
const IDLE_MS = 4000;
/** a pool unused for one to two sweeps is closed (its connections idled out long before) */
const SWEEP_MS = 30_000;

export interface UpstreamPoolsOptions {
  /** EDGE_UPSTREAM_TIMEOUT_MS: an upstream silent this long (before its headers, or between body chunks) fails */
  timeoutMs: number;
}

interface Entry {
  pool: Pool;
  used: boolean;
}

/**
 * Keep-alive connection pools to upstreams (undici), one `Pool` per replica address (`host:port`), created on
 * first use. Each holds at most CONNECTIONS connections, closes those idle for IDLE_MS (or a second less than the
 * `Keep-Alive: timeout` the upstream announces, whichever is shorter), and times out an upstream silent for
 * `timeoutMs`. Replicas come and go (every rolling update gives new addresses): a pool not used for a whole sweep
 * interval is closed, gracefully (an answer still streaming from it finishes), and forgotten.
 */
export class UpstreamPools {
  private readonly pools = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: UpstreamPoolsOptions) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** the pool of an upstream address, created when first asked for */
  get(upstream: string): Pool {
    let entry = this.pools.get(upstream);
    if (!entry) {
      entry = {
        pool: new Pool(`http://${upstream}`, {
          connections: CONNECTIONS,
          pipelining: 1,
          keepAliveTimeout: IDLE_MS,
          keepAliveMaxTimeout: IDLE_MS,
          keepAliveTimeoutThreshold: 1000,
          headersTimeout: this.opts.timeoutMs,
          bodyTimeout: this.opts.timeoutMs,
          connectTimeout: Math.min(10_000, this.opts.timeoutMs),
        }),
        used: true,
      };
      this.pools.set(upstream, entry);
    }
    entry.used = true;
    return entry.pool;
  }

  /** the upstream addresses that have a pool now */
  get addresses(): string[] {
    return [...this.pools.keys()];
  }

  /** Closes the pools not used since the previous sweep (runs every SWEEP_MS; tests call it directly). */
  sweep(): void {
    for (const [upstream, entry] of this.pools) {
      if (entry.used) {
        entry.used = false;
        continue;
      }
      this.pools.delete(upstream);
      entry.pool.close().catch(() => {});
    }
  }

  /** Shutdown: every upstream connection is cut (what was in flight had the drain period to finish). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const pools = [...this.pools.values()].map((e) => e.pool);
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => {})));
  }
}
