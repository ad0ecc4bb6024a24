import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { createProxyServer, type ProxyServer } from "http-proxy-3";
import type { FastifyBaseLogger } from "fastify";
import type { EdgeTarget } from "../kernel/area.js";
import type { EdgeAccess } from "./access.js";
import type { RouteCache } from "./route-cache.js";
import { prepareUpstreamHeaders, replayable, visitorOf } from "./headers.js";
import { OBSERVED, observe, type ObservedResponse } from "./observed.js";
import { pages, sendPage, sendPageOnSocket, sendRedirect, type EdgePage } from "./pages.js";
import { hostName } from "./config.js";
import type { StaticServe } from "./static-serve.js";
import { ACME_CHALLENGE, answerChallenge } from "./acme-challenge.js";
import { isSignIn } from "./sign-in.js";
import { isSuiteSignIn } from "./suite-sign-in.js";
import { Attempt, Flight, type AttemptOwner } from "./attempt.js";
import { UpstreamPools } from "./upstream.js";
import type { Waker } from "./wake.js";

/** What the edge saw of one answered request (statistics, issue 11, aggregate these in memory). */
import type { EdgeObservation } from "./contract.js";

export interface EdgeProxyOptions {
  upstreamTimeoutMs: number;
  log: FastifyBaseLogger;
  observe?: (o: EdgeObservation) => void;
  /** static sites' files (targets with `site`); without it such a target has no upstream (503) */
  files?: StaticServe;
  /** ACME HTTP-01: the key authorization for a token (kernel.use("certificates").challenge), for any host */
  challenge?: (token: string) => Promise<string | null>;
  /** POST /.platform/sign-in on any served host: the edge's sign-in form (sign-in.ts) */
  signIn?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** GET /.platform/suite-sign-in and /.platform/suite-landing (suite-sign-in.ts): only when a suite is configured */
  suiteSignIn?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** scale-to-zero: holds requests for an idle-stopped app while it starts (wake.ts) */
  waker?: Waker;
}

/** an upstream that refused a connection is skipped by round robin this long (the store says soon whether it is gone) */
const EJECT_MS = 3000;

/**
 * The proxying half of the edge: host → target (RouteCache) → access decision (EdgeAccess) → a replica by round
 * robin over keep-alive upstream pools (undici, `upstream.ts`; bodies stream both ways, `attempt.ts`); WebSocket
 * upgrades are piped by http-proxy-3. A replayable request (GET/HEAD without body) whose upstream failed before
 * answering is sent once more, to another replica of a freshly resolved target: a replica stopping during a
 * rolling update loses no such request.
 */
export class EdgeProxy implements AttemptOwner {
  private readonly proxy: ProxyServer;
  private readonly pools: UpstreamPools;
  private readonly rr = new Map<string, number>();
  private readonly ejected = new Map<string, number>();
  private readonly upgraded = new Set<Duplex>();
  closing = false;

  constructor(
    private readonly routes: RouteCache,
    private readonly access: EdgeAccess,
    private readonly opts: EdgeProxyOptions,
  ) {
    this.pools = new UpstreamPools({ timeoutMs: opts.upstreamTimeoutMs });
    this.proxy = createProxyServer({ xfwd: false, proxyTimeout: opts.upstreamTimeoutMs });
    // errors without a callback of their own (a client socket of an upgrade failing): nothing to answer
    this.proxy.on("error", (err, _req, res) => {
      opts.log.debug({ err: err.message }, "edge proxy error");
      if (res && "destroy" in res) res.destroy();
    });
    // the upstream half of an upgraded connection: when the visitor's side closes, the library only half-closes
    // it; an upstream that never closes its side is cut after a grace period, and at shutdown
    this.proxy.on("proxyReqWs", (proxyReq, _req, socket) => {
      proxyReq.once("upgrade", (_res, upstreamSocket: Duplex) => {
        this.upgraded.add(upstreamSocket);
        upstreamSocket.once("close", () => this.upgraded.delete(upstreamSocket));
        socket.once("close", () => setTimeout(() => upstreamSocket.destroy(), 5000).unref());
      });
    });
  }

  /** the upstream addresses with a connection pool now (tests) */
  get upstreamPools(): string[] {
    return this.pools.addresses;
  }

  /** closes the pools of upstreams unused since the previous sweep (every 30 s by itself; tests call it) */
  sweepPools(): void {
    this.pools.sweep();
  }

  /** A plain HTTP request on the edge's listener. */
  handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.opts.challenge && req.method === "GET" && req.url?.startsWith(ACME_CHALLENGE))
      return answerChallenge(req.url, res, this.opts.challenge, this.opts.log);
    // one object per request, filled in as it goes and handed to `observe` as it is once the answer finished
    const seen = this.opts.observe ? observe(req, res, this.opts.observe) : null;
    if (this.closing) return sendPage(res, pages.shuttingDown(), req.method);
    // nginx's replicas failed (502) or went silent (504): a GET/HEAD runs again here on a fresh route
    const failed = req.headers["x-platform-edge-failed"];
    if (failed !== undefined) {
      delete req.headers["x-platform-edge-failed"];
      if (failed === "504") return sendPage(res, pages.gatewayTimeout(), req.method);
      if (!replayable(req)) return sendPage(res, pages.badGateway(), req.method);
      this.routes.drop(hostName(req.headers.host) ?? "");
    }
    if (this.opts.signIn && isSignIn(req))
      return void this.opts.signIn(req, res).catch((err) => {
        this.opts.log.error({ err }, "edge sign-in failed");
        sendPage(res, pages.storeDown(), req.method);
      });
    if (this.opts.suiteSignIn && isSuiteSignIn(req))
      return void this.opts.suiteSignIn(req, res).catch((err) => {
        this.opts.log.error({ err }, "edge suite sign-in failed");
        sendPage(res, pages.storeDown(), req.method);
      });
    // the common case without a wait: a cached route to a public app or site goes straight to its upstream or
    // files (other visibilities, and owners with an access policy, take the path below through the decision)
    const host = hostName(req.headers.host);
    const cached = host ? this.routes.peek(host) : undefined;
    if (cached?.target && this.access.open(cached.target)) {
      if (seen) {
        seen.host = host!;
        seen.target = cached.target;
      }
      return this.forward(req, res, host!, cached.target);
    }
    void this.route(req)
      .then(async (found) => {
        if ("page" in found) return sendPage(res, found.page, req.method);
        if (seen) {
          seen.host = found.host;
          seen.target = found.target;
        }
        const decision = await this.access.decide(found.target, req, found.url);
        if (decision.kind === "deny") return sendPage(res, this.withSuiteLink(decision), req.method);
        if (decision.kind === "redirect") return sendRedirect(res, decision.location, decision.headers);
        this.forward(req, res, found.host, found.target);
      })
      .catch((err) => {
        this.opts.log.error({ err }, "edge request failed before reaching an upstream");
        sendPage(res, pages.storeDown(), req.method);
      });
  };

  /** The sign-in page offers "Sign in with the suite" too where a suite is configured (a copy: decisions are cached). */
  private withSuiteLink(page: EdgePage): EdgePage {
    return page.signIn && this.opts.suiteSignIn ? { ...page, signIn: { ...page.signIn, suite: true } } : page;
  }

  private forward(req: IncomingMessage, res: ServerResponse, host: string, target: EdgeTarget): void {
    if (target.site && this.opts.files) return this.opts.files.serve(req, res, target.site);
    if (target.idle && this.opts.waker) return this.afterWake(req, res, host, target);
    const h = req.headers;
    const replay = replayable(req);
    const body = !replay && (h["transfer-encoding"] !== undefined || (h["content-length"] ?? "0") !== "0");
    prepareUpstreamHeaders(req, false);
    // framing is the pool's own (a body arrives de-chunked and is framed again); node answered any 100-continue
    if (h["transfer-encoding"] !== undefined) delete h["transfer-encoding"];
    if (h.expect !== undefined) delete h.expect;
    const flight = new Flight(req, res, host, target, replay, body);
    (res as FlightResponse)[FLIGHT] = flight;
    res.on("close", visitorClosed); // one shared listener, no closure per request
    this.send(flight);
  }

  /** The request waits (its body unread) while the idle-stopped app starts, then goes to the fresh replica. */
  private afterWake(req: IncomingMessage, res: ServerResponse, host: string, target: EdgeTarget): void {
    this.opts.waker!.ready(host, target).then(
      (ready) => {
        if (res.destroyed || res.headersSent) return; // the visitor gave up meanwhile
        if ("page" in ready) return sendPage(res, ready.page, req.method);
        const seen = (res as ObservedResponse)[OBSERVED];
        if (seen) seen.target = ready.target;
        this.forward(req, res, host, ready.target);
      },
      (err) => {
        this.opts.log.error({ err, host }, "edge wake failed");
        if (!res.headersSent) sendPage(res, pages.wakeFailed(), req.method);
      },
    );
  }

  /** An upgrade request (WebSocket): routed and decided like any request, then piped both ways. */
  upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on("error", () => socket.destroy());
    this.upgraded.add(socket);
    socket.once("close", () => this.upgraded.delete(socket));
    if (this.closing) return sendPageOnSocket(socket, pages.shuttingDown());
    void this.route(req)
      .then(async (found) => {
        if ("page" in found) return sendPageOnSocket(socket, found.page);
        const decision = await this.access.decide(found.target, req, found.url);
        if (decision.kind === "deny") return sendPageOnSocket(socket, decision);
        if (decision.kind === "redirect")
          return sendPageOnSocket(socket, {
            status: 302,
            title: "Sign in",
            message: "",
            headers: { location: decision.location },
          });
        let target = found.target;
        if (target.idle && this.opts.waker) {
          const ready = await this.opts.waker.ready(found.host, target);
          if ("page" in ready) return sendPageOnSocket(socket, ready.page);
          target = ready.target;
        }
        const upstream = this.pick(target, new Set());
        if (!upstream) return sendPageOnSocket(socket, pages.noReplica());
        prepareUpstreamHeaders(req, true);
        this.proxy.ws(req, socket, head, { target: `http://${upstream}` }, (err) => {
          this.opts.log.debug({ err: err.message, upstream }, "edge upgrade to upstream failed");
          if (isConnectError(err)) this.eject(upstream);
          // nothing sent yet: the visitor gets a page rather than a cut connection
          if ((socket as Duplex & { bytesWritten?: number }).bytesWritten === 0)
            sendPageOnSocket(socket, pages.badGateway());
        });
      })
      .catch((err) => {
        this.opts.log.error({ err }, "edge upgrade failed before reaching an upstream");
        sendPageOnSocket(socket, pages.storeDown());
      });
  };

  private async route(
    req: IncomingMessage,
  ): Promise<{ page: ReturnType<typeof pages.unknownHost> } | { host: string; target: EdgeTarget; url: string }> {
    const host = hostName(req.headers.host);
    if (!host) return { page: pages.unknownHost() };
    const { target } = await this.routes.get(host);
    if (!target) return { page: pages.unknownHost() };
    const proto = visitorOf(req).https ? "https" : "http";
    return { host, target, url: `${proto}://${req.headers.host}${req.url ?? "/"}` };
  }

  private send(flight: Flight): void {
    const { req, res } = flight;
    const upstream = this.pick(flight.target, flight.tried);
    if (!upstream) return sendPage(res, flight.tried.size === 0 ? pages.noReplica() : pages.badGateway(), req.method);
    flight.tried.add(upstream);
    const attempt = new Attempt(flight, upstream, this);
    flight.current = attempt;
    this.pools.get(upstream).dispatch(
      {
        path: req.url ?? "/",
        method: req.method ?? "GET",
        headers: req.headers,
        // the pool's headers timeout starts once the whole body went through (an upload may outlast it)
        body: flight.body ? req : null,
      },
      attempt,
    );
  }

  /** An attempt failed: before its answer started, a replayable request goes once to another replica; else 502/504. */
  failed(attempt: Attempt, err: Error): void {
    const flight = attempt.flight;
    if (flight.current !== attempt) return; // a late error of an attempt already replaced
    flight.current = null;
    const { req, res } = flight;
    const timedOut = (err as { code?: string }).code === "UND_ERR_HEADERS_TIMEOUT";
    if (isConnectError(err)) this.eject(attempt.upstream);
    if (res.headersSent) return void res.destroy(); // the answer was under way: cut it, never add to it
    // the visitor left (not req.socket: the pool lets go of it, `socket = null`, once it streamed a request's body)
    if (flight.gone || res.destroyed) return;
    if (flight.replay && flight.tried.size === 1 && !timedOut) {
      const upstream = attempt.upstream;
      this.opts.log.debug({ err: err.message, upstream, host: flight.host }, "edge retrying on another replica");
      this.routes.drop(flight.host);
      void this.routes.get(flight.host, true).then(
        ({ target }) => {
          if (target && target.id === flight.target.id) flight.target = target;
          if (!flight.gone) this.send(flight);
        },
        () => {
          if (!flight.gone) this.send(flight);
        },
      );
      return;
    }
    this.opts.log.warn({ err: err.message, upstream: attempt.upstream, host: flight.host }, "edge upstream failed");
    sendPage(res, timedOut ? pages.gatewayTimeout() : pages.badGateway(), req.method);
  }

  /** Round robin over the target's replicas, skipping those already tried for this request and, while others remain, those just seen failing. */
  /** the index in its replicas the round robin gives a target next (nginx's rotation goes on from it) */
  nextReplica(target: EdgeTarget): number {
    return this.rr.get(`${target.kind}:${target.id}`) ?? 0;
  }

  private pick(target: EdgeTarget, tried: Set<string>): string | null {
    const ups = target.upstreams;
    if (!ups.length) return null;
    if (ups.length === 1) {
      // one replica (most apps): no rotation to keep
      const up = ups[0];
      return tried.has(up) ? null : up;
    }
    const key = `${target.kind}:${target.id}`;
    const start = this.rr.get(key) ?? 0;
    if (this.rr.size > 100_000) this.rr.clear();
    this.rr.set(key, (start + 1) % 1_000_000_007);
    const now = Date.now();
    let fallback: string | null = null;
    for (let i = 0; i < ups.length; i++) {
      const up = ups[(start + i) % ups.length];
      if (tried.has(up)) continue;
      const until = this.ejected.get(up);
      if (until !== undefined && until > now) {
        fallback ??= up;
        continue;
      }
      return up;
    }
    return fallback;
  }

  private eject(upstream: string): void {
    if (this.ejected.size > 10_000) this.ejected.clear();
    this.ejected.set(upstream, Date.now() + EJECT_MS);
  }

  /** Shutdown begins: new requests are refused, answers close their connection, upgraded connections are cut. */
  beginClose(): void {
    this.closing = true;
    for (const socket of this.upgraded) socket.destroy();
    this.upgraded.clear();
  }

  /** Shutdown ends (in-flight requests drained): the upstream connections close. */
  async close(): Promise<void> {
    this.beginClose();
    await this.pools.close();
  }
}

const FLIGHT = Symbol("edge flight");
type FlightResponse = ServerResponse & { [FLIGHT]?: Flight };

/** The visitor's connection closed: before the answer was complete, the upstream request is cut. */
function visitorClosed(this: FlightResponse): void {
  if (this.writableFinished) return;
  const flight = this[FLIGHT]!;
  flight.gone = true;
  flight.current?.abort();
}

/** failures to reach a replica or to keep its connection (undici's socket closed / connect timeout included) */
const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function isConnectError(err: Error): boolean {
  return CONNECT_CODES.has((err as NodeJS.ErrnoException).code ?? "");
}
