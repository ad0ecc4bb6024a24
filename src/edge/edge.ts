import type { Platform } from "../kernel/context.js";
import { TokenResolver } from "../auth/token-resolver.js";
import { EdgeAccess } from "./access.js";
import { appLabel, hostName, type EdgeConfig } from "./config.js";
import { EdgeProxy } from "./proxy.js";
import type { EdgeObservation } from "./contract.js";
import { RouteCache, type Resolved } from "./route-cache.js";
import { RouteFeed } from "./route-feed.js";
import { EdgeListener } from "./server.js";
import { StaticServe } from "./static-serve.js";
import { StatsAggregator } from "./stats/aggregator.js";
import { addMinuteStats, addStats } from "./stats/repo.js";
import { inTransaction } from "../store/db.js";
import { EdgeTlsListener } from "./tls-listener.js";
import { fallbackCertificate } from "./fallback-cert.js";
import { accountsService } from "../accounts/public.js";
import { answerSignIn, type SignInOptions } from "./sign-in.js";
import { answerSuiteSignIn, type SuiteSignInOptions } from "./suite-sign-in.js";
import { down, up, type ComponentStatus } from "../kernel/components.js";
import { Waker } from "./wake.js";
import { randomBytes } from "node:crypto";
import { detectNginx, NGINX_INSTALL_HINT } from "./nginx/detect.js";
import { NginxPlane } from "./nginx/plane.js";
import type { EdgeTarget } from "../kernel/contracts.js";
import { freePort } from "../kernel/free-port.js";
import { NginxStatic } from "./nginx/static.js";
import { staticExtension } from "./nginx/static-lua.js";
import { NginxAccessCache } from "./nginx/access-cache.js";
import { accessExtension } from "./nginx/access-lua.js";
import { NginxTls, writeFallback } from "./nginx/tls.js";
import { tlsExtension } from "./nginx/tls-lua.js";
import path from "node:path";

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
  private tls: EdgeTlsListener | null = null;
  private proxy: EdgeProxy | null = null;
  /** nginx on EDGE_PORT in front of this edge (README "The nginx data plane"); null: this edge serves alone */
  private nginx: NginxPlane | null = null;
  /** static sites materialised for nginx (README "Static sites in nginx"); null without nginx or static sites */
  private nginxStatic: NginxStatic | null = null;
  /** admissions to locked apps and sites cached in nginx (README "Cached access decisions in nginx") */
  private nginxAccess: NginxAccessCache | null = null;
  /** HTTPS in nginx: its certificates by SNI (README "TLS in nginx"), and the port nginx serves it on */
  private nginxTls: NginxTls | null = null;
  private nginxTlsPort: number | null = null;
  /** scale-to-zero: requests held while an idle-stopped app starts (wake.ts) */
  waker: Waker | null = null;
  /** per-app daily statistics of every answered request (stats/), flushed every EDGE_STATS_FLUSH_MS */
  readonly stats: StatsAggregator;
  /** set before start to see every answered request too (after the statistics counted it) */
  observe: ((o: EdgeObservation) => void) | undefined = undefined;

  constructor(
    private readonly p: Platform,
    readonly config: EdgeConfig,
  ) {
    // a sign-out: decisions and nginx's admissions go after this resolver forgot it, never before (on its listener)
    this.tokens = new TokenResolver(p.db, p.databaseUrl, p.log, () => {
      this.access.forgetDecisions();
      this.nginxAccess?.invalidate(false);
    });
    this.routes = new RouteCache((host) => this.resolveAndOffer(host), {
      ttlMs: config.routeTtlMs,
      negativeTtlMs: config.negativeTtlMs,
      live: () => this.feed?.live ?? false,
    });
    this.access = new EdgeAccess(this.tokens, {
      ttlMs: config.routeTtlMs,
      loginUrl: config.loginUrl,
      admitted: (request, expiresAt) => this.nginxAccess?.admit(request, expiresAt),
    });
    // owners whose areas decide who sees their targets (organizations: company sites' visibility)
    for (const policy of p.kernel.all("edgeAccess")) this.access.addPolicy(policy, p.db);
    this.stats = new StatsAggregator({
      flushMs: config.statsFlushMs,
      minutes: config.minuteMetrics,
      // the daily and the per-minute rows of a flush commit together: a failed flush retries both, counting none twice
      write: (rows, minutes) =>
        inTransaction(p.db, async (tx) => {
          await addStats(tx, rows);
          await addMinuteStats(tx, minutes);
        }),
      log: p.log,
      collect: () => this.nginx?.drainStats() ?? Promise.resolve([]),
    });
  }

  /** A resolution for the route cache, offered to nginx too (pushed there when it may answer the host alone). */
  private async resolveAndOffer(host: string): Promise<Resolved> {
    const plane = this.nginx;
    const generation = plane?.generation ?? 0;
    const sites = this.nginxStatic;
    const siteGeneration = sites?.generation ?? 0;
    const locked = this.nginxAccess;
    const lockedGeneration = locked?.generation ?? 0;
    const resolved = await this.resolve(host);
    sites?.offer(host, resolved, siteGeneration);
    locked?.offer(host, resolved, lockedGeneration);
    const t = resolved.target;
    await plane?.offer(host, resolved, generation, t && this.proxy ? this.proxy.nextReplica(t) : 0);
    return resolved;
  }

  /** Whether a host name (a Host header's form, port allowed) is served: an app, a site or a custom domain. */
  async routed(host: string): Promise<boolean> {
    const name = hostName(host);
    return name !== null && (await this.routes.get(name)).target !== null;
  }

  /** the listener's bound port; null when this process serves no edge */
  get port(): number | null {
    if (this.nginx) return this.listener ? this.nginx.port : null;
    return this.listener?.port ?? null;
  }

  /** static sites materialised for nginx (tests sweep it) */
  get staticPlane(): NginxStatic | null {
    return this.nginxStatic;
  }

  /** which data plane answers on EDGE_PORT: nginx in front of this edge, or this edge alone */
  get dataPlane(): "nginx" | "node" {
    return this.nginx ? "nginx" : "node";
  }

  /** the HTTPS listener's bound port; null when this process serves no HTTPS (EDGE_TLS_PORT=off) */
  get tlsPort(): number | null {
    return this.tls?.port ?? this.nginxTlsPort;
  }

  /** for readiness: both listeners bound (the HTTPS one unless EDGE_TLS_PORT=off) */
  health(): ComponentStatus {
    if (this.port === null) return down(`not listening on EDGE_PORT ${this.config.port}`);
    if (this.config.tlsPort !== null && this.tlsPort === null)
      return down(`not listening on EDGE_TLS_PORT ${this.config.tlsPort}`);
    if (this.nginx && this.nginx.problem) return down(`nginx: ${this.nginx.problem}`);
    const plane = this.nginx ? "nginx + Lua" : "node";
    return up(`EDGE_PORT ${this.port} (${plane})${this.tlsPort === null ? "" : `, EDGE_TLS_PORT ${this.tlsPort}`}`);
  }

  /**
   * What a host name is: `<label>.<APPS_DOMAIN>` asks each route source in turn; any other host is asked of the
   * host sources (verified custom domains), whose answer is an app slug resolved the same way.
   */
  private async resolve(host: string): Promise<Resolved> {
    let label = appLabel(host, this.config.appsDomain);
    if (!label && !host.endsWith(`.${this.config.appsDomain}`)) {
      for (const hosts of this.p.kernel.all("edgeHosts")) {
        label = await hosts.appSlug(this.p.db, host);
        if (label) break;
      }
    }
    if (!label) return UNKNOWN;
    for (const source of this.p.kernel.all("edgeRoutes")) {
      const target = await source.resolve(this.p.db, label);
      if (target) return { target, channel: source.channel };
    }
    return UNKNOWN;
  }

  async start(): Promise<void> {
    const [edgeRoutes, edgeHosts] = [this.p.kernel.all("edgeRoutes"), this.p.kernel.all("edgeHosts")];
    const certificates = this.p.kernel.use("certificates");
    const policyChannels = this.access.channels;
    const channels = [
      ...new Set([
        ...[...edgeRoutes, ...edgeHosts, ...(certificates ? [certificates] : [])].map((s) => s.channel),
        ...policyChannels,
      ]),
    ];
    this.feed = new RouteFeed(this.p.databaseUrl, channels, this.p.log, (channel, payload) => {
      // a certificate stored or renewed: that host's TLS context goes (the listener lost: all of them)
      if (channel !== null && channel === certificates?.channel) {
        this.nginxTls?.invalidate(payload);
        return this.tls?.invalidate(payload);
      }
      // an access policy's change (visibility, grants, memberships): only the decisions go
      if (channel !== null && policyChannels.includes(channel)) {
        this.nginxAccess?.invalidate(false);
        return this.access.invalidate();
      }
      if (channel === null) {
        this.tls?.invalidate(null);
        this.nginxTls?.invalidate(null);
      }
      // a custom domain's entry carries its app's channel, so a domain change drops every entry
      const routeChannel = edgeHosts.some((h) => h.channel === channel) ? null : channel;
      this.routes.invalidate(routeChannel);
      this.nginx?.invalidate(routeChannel);
      this.nginxStatic?.invalidate();
      this.nginxAccess?.invalidate(true);
      this.access.invalidate();
      this.waker?.poke();
    });
    await this.feed.start();
    await this.tokens.start();
    const files = this.p.kernel.use("staticFiles");
    const staticServe = files
      ? new StaticServe(files, this.p.db, { cacheBytes: this.config.staticCacheBytes, log: this.p.log })
      : undefined;
    const signIn = this.signIn();
    const suiteSignIn = this.suiteSignIn();
    const wake = this.p.kernel.use("edgeWake");
    const accessLogs = this.p.kernel.all("edgeAccessLog");
    // an app or site whose access lines a sink wants (a log drain) is answered by the Node edge, which records them:
    // nginx's own answers reach no sink
    const drained = (target: EdgeTarget) => accessLogs.some((s) => !s.wants || s.wants(target));
    this.waker = new Waker(this.routes, { wake, timeoutMs: this.config.wakeTimeoutMs, log: this.p.log });
    const proxy = new EdgeProxy(this.routes, this.access, {
      upstreamTimeoutMs: this.config.upstreamTimeoutMs,
      log: this.p.log,
      observe: (o) => {
        // behind nginx, nginx counts every answer it sent (the visitor's bytes are its own): only its app is noted
        if (o.viaNginx) {
          if (o.target) this.nginx?.known(o.target);
        } else this.stats.record(o);
        for (const sink of accessLogs) sink.record(o);
        this.observe?.(o);
      },
      challenge: certificates ? (token) => certificates.challenge(this.p.db, token) : undefined,
      signIn: (req, res) => answerSignIn(req, res, signIn),
      suiteSignIn: suiteSignIn ? (req, res) => answerSuiteSignIn(req, res, suiteSignIn) : undefined,
      waker: this.waker,
      files: staticServe,
    });
    this.stats.start();
    this.proxy = proxy;
    const listening = {
      port: this.config.port,
      host: this.config.host,
      requestTimeoutMs: this.config.requestTimeoutMs,
      drainMs: this.config.drainMs,
      http: this.p.config.http,
      log: this.p.log,
    };
    const install = this.config.dataPlane === "nginx" ? detectNginx(process.env) : null;
    if (install && "missing" in install)
      this.p.log.warn(
        { reason: install.missing, install: NGINX_INSTALL_HINT },
        `the edge serves from Node alone, at about twice nginx's CPU per request: ${install.missing}; ${NGINX_INSTALL_HINT}`,
      );
    if (install && !("missing" in install)) {
      // nginx takes EDGE_PORT; this edge answers what nginx hands it, on loopback only
      const secret = randomBytes(24).toString("hex");
      this.listener = new EdgeListener(proxy, { ...listening, port: 0, host: "127.0.0.1", behindNginx: secret });
      const nodePort = await this.listener.listen();
      const feedOf = this.feed;
      const staticDir = path.join(this.p.config.dataDir, "edge-static");
      if (files && staticServe)
        this.nginxStatic = new NginxStatic({
          dir: staticDir,
          cacheBytes: this.config.staticCacheBytes,
          manifest: (id) => files.manifest(this.p.db, id),
          content: (hash) => staticServe.content(hash),
          admin: (pathname, body) => this.nginx?.admin(pathname, { method: "POST", body }) ?? Promise.resolve(null),
          open: (target) => this.access.open(target) && !drained(target),
          live: () => feedOf.live,
          known: (target) => this.nginx?.known(target),
          log: this.p.log,
        });
      this.nginxAccess = new NginxAccessCache({
        admin: (pathname, body) => this.nginx?.admin(pathname, { method: "POST", body }) ?? Promise.resolve(null),
        // a drained locked app or site is not held either (open ones are not this cache's)
        open: (target) => this.access.open(target) || drained(target),
        // admissions stand only while both route changes and sign-outs are heard
        live: () => feedOf.live && this.tokens.listening,
        known: (target) => this.nginx?.known(target),
        sites: this.nginxStatic,
        log: this.p.log,
      });
      const tls = this.config.tlsPort === null ? null : await this.startNginxTls(secret, () => feedOf.live);
      this.nginx = new NginxPlane({
        install,
        secret,
        config: this.config,
        dataDir: this.p.config.dataDir,
        nodePort,
        log: this.p.log,
        open: (target) => this.access.open(target) && !drained(target),
        live: () => feedOf.live,
        extensions: [
          ...(this.nginxStatic ? [staticExtension(staticDir, secret, nodePort)] : []),
          accessExtension(),
          ...(tls ? [tls] : []),
        ],
        restarted: () => {
          this.nginxStatic?.restarted();
          this.nginxAccess?.restarted();
        },
      });
      for (const sink of accessLogs)
        sink.onChange?.(() => {
          this.nginx?.invalidate(null);
          this.nginxStatic?.invalidate();
          this.nginxAccess?.invalidate(true);
        });
      await this.nginx.start();
      this.nginxStatic?.start();
      if (tls) return; // HTTPS is nginx's too
    } else {
      this.listener = new EdgeListener(proxy, listening);
      await this.listener.listen();
    }
    if (this.config.tlsPort === null) return;
    const feed = this.feed;
    this.tls = new EdgeTlsListener(proxy, {
      ...listening,
      port: this.config.tlsPort,
      db: this.p.db,
      certificates,
      fallback: await fallbackCertificate(this.p.config.dataDir, this.config.appsDomain),
      routed: async (host) => (await this.routes.get(host)).target !== null,
      live: () => feed.live,
    });
    await this.tls.listen();
  }

  /** nginx's HTTPS on EDGE_TLS_PORT: its certificate server and configuration part (nginx/tls.ts) */
  private async startNginxTls(secret: string, live: () => boolean) {
    const fallback = await fallbackCertificate(this.p.config.dataDir, this.config.appsDomain);
    const port = this.config.tlsPort || (await freePort(this.config.host));
    this.nginxTls = new NginxTls({
      db: this.p.db,
      certificates: this.p.kernel.use("certificates"),
      routed: async (host) => (await this.routes.get(host)).target !== null,
      live,
      secret,
      admin: (pathname, body) => this.nginx?.admin(pathname, { method: "POST", body }) ?? Promise.resolve(null),
      log: this.p.log,
    });
    const certPort = await this.nginxTls.start();
    this.nginxTlsPort = port;
    return tlsExtension({
      host: this.config.host,
      port,
      fallback: await writeFallback(path.join(this.p.config.dataDir, "edge-nginx-tls"), fallback),
      certPort,
      secret,
    });
  }

  /** The sign-in form's backend: the accounts area's own login (as /v1/auth/login and the console use it). */
  private signIn(): SignInOptions {
    const accounts = accountsService(this.p.db, this.p.config, this.tokens);
    return {
      login: (email, password) => accounts.login(email, password),
      suite: this.p.kernel.use("suiteEdgeSignIn") !== null,
      maxAgeSeconds: this.p.config.sessionTtlDays * 86_400,
      routed: async (host) => (await this.routes.get(host)).target !== null,
      hit: (key) => this.p.rateLimit.hit(key),
      log: this.p.log,
    };
  }

  /** "Sign in with the suite" on a site's host, when the suite's sign-in is there (a suite is configured). */
  private suiteSignIn(): SuiteSignInOptions | null {
    const suite = this.p.kernel.use("suiteEdgeSignIn");
    if (!suite) return null;
    return {
      start: (returnTo, browserHash) => suite.start(returnTo, browserHash),
      exchange: (code, browser) => suite.exchange(code, browser),
      maxAgeSeconds: this.p.config.sessionTtlDays * 86_400,
      routed: (host) => this.routed(host),
      log: this.p.log,
    };
  }

  async stop(): Promise<void> {
    // nginx first: it stops taking visitors and finishes what is under way, some of it through this edge
    await this.nginx?.stop();
    this.nginx = null;
    this.nginxStatic?.stop();
    this.nginxStatic = null;
    this.nginxAccess = null;
    await this.nginxTls?.stop();
    this.nginxTls = null;
    this.nginxTlsPort = null;
    await Promise.all([this.listener?.close(), this.tls?.close()]);
    this.listener = null;
    this.tls = null;
    await this.proxy?.close();
    this.proxy = null;
    await this.stats.stop(); // after the drain: what the last requests added is stored too
    await this.feed?.close();
    this.feed = null;
    await this.tokens.close();
  }
}
