import type { Platform } from "../kernel/context.js";
import { TokenResolver } from "../auth/token-resolver.js";
import { EdgeAccess } from "./access.js";
import { appLabel, type EdgeConfig } from "./config.js";
import { EdgeProxy, type EdgeObservation } from "./proxy.js";
import { RouteCache, type Resolved } from "./route-cache.js";
import { RouteFeed } from "./route-feed.js";
import { EdgeListener } from "./server.js";
import { StatsAggregator } from "./stats/aggregator.js";
import { addStats } from "./stats/repo.js";

const UNKNOWN: Resolved = { target: null, channel: null };

/**
 * The edge of one process: routes from the kernel's route sources (cached, dropped on their NOTIFY), the access
 * decision, the proxy and its listener. Built at setup on every process; connections and the listener only
 * start on hosts with the `edge` role.
 */
export class Edge {
  readonly routes: RouteCache;
  readonly access: EdgeAccess;
  private readonly tokens: TokenResolver;
  private feed: RouteFeed | null = null;
  private listener: EdgeListener | null = null;
  /** per-app daily statistics of every answered request (stats/), flushed every EDGE_STATS_FLUSH_MS */
  readonly stats: StatsAggregator;
  /** set before start to see every answered request too (after the statistics counted it) */
  observe: ((o: EdgeObservation) => void) | undefined = undefined;

  constructor(
    private readonly p: Platform,
    readonly config: EdgeConfig,
  ) {
    this.tokens = new TokenResolver(p.db, p.databaseUrl, p.log);
    this.routes = new RouteCache((host) => this.resolve(host), {
      ttlMs: config.routeTtlMs,
      negativeTtlMs: config.negativeTtlMs,
      live: () => this.feed?.live ?? false,
    });
    this.access = new EdgeAccess(this.tokens, { ttlMs: config.routeTtlMs, loginUrl: config.loginUrl });
    this.stats = new StatsAggregator({
      flushMs: config.statsFlushMs,
      write: (rows) => addStats(p.db, rows),
      log: p.log,
    });
  }

  /** the listener's bound port; null when this process serves no edge */
  get port(): number | null {
    return this.listener?.port ?? null;
  }

  /**
   * What a host name is: `<label>.<APPS_DOMAIN>` asks each route source in turn; any other host is asked of the
   * host sources (verified custom domains), whose answer is an app slug resolved the same way.
   */
  private async resolve(host: string): Promise<Resolved> {
    let label = appLabel(host, this.config.appsDomain);
    if (!label && !host.endsWith(`.${this.config.appsDomain}`)) {
      for (const hosts of this.p.kernel.edgeHosts) {
        label = await hosts.appSlug(this.p.db, host);
        if (label) break;
      }
    }
    if (!label) return UNKNOWN;
    for (const source of this.p.kernel.edgeRoutes) {
      const target = await source.resolve(this.p.db, label);
      if (target) return { target, channel: source.channel };
    }
    return UNKNOWN;
  }

  async start(): Promise<void> {
    const { edgeRoutes, edgeHosts } = this.p.kernel;
    const channels = [...new Set([...edgeRoutes, ...edgeHosts].map((s) => s.channel))];
    this.feed = new RouteFeed(this.p.databaseUrl, channels, this.p.log, (channel) => {
      // a custom domain's entry carries its app's channel, so a domain change drops every entry
      this.routes.invalidate(edgeHosts.some((h) => h.channel === channel) ? null : channel);
      this.access.invalidate();
    });
    await this.feed.start();
    await this.tokens.start();
    const proxy = new EdgeProxy(this.routes, this.access, {
      upstreamTimeoutMs: this.config.upstreamTimeoutMs,
      log: this.p.log,
      observe: (o) => {
        this.stats.record(o);
        this.observe?.(o);
      },
    });
    this.stats.start();
    this.listener = new EdgeListener(proxy, {
      port: this.config.port,
      host: this.config.host,
      requestTimeoutMs: this.config.requestTimeoutMs,
      drainMs: this.config.drainMs,
      http: this.p.config.http,
      log: this.p.log,
    });
    await this.listener.listen();
  }

  async stop(): Promise<void> {
    await this.listener?.close();
    this.listener = null;
    await this.stats.stop(); // after the drain: what the last requests added is stored too
    await this.feed?.close();
    this.feed = null;
    await this.tokens.close();
  }
}
