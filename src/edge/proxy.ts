import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { Readable, type Duplex } from "node:stream";
import { createProxyServer, type ProxyServer } from "http-proxy-3";
import type { FastifyBaseLogger } from "fastify";
import type { EdgeTarget } from "../kernel/area.js";
import type { EdgeAccess } from "./access.js";
import type { RouteCache } from "./route-cache.js";
import { appSetCookies, prepareUpstreamHeaders, replayable } from "./headers.js";
import { pages, sendPage, sendPageOnSocket, sendRedirect } from "./pages.js";
import { hostName } from "./config.js";
import type { StaticServe } from "./static-serve.js";
import { ACME_CHALLENGE, answerChallenge } from "./acme-challenge.js";

/** One request on its way: the target it was routed to, what was tried, whether it may be sent again. */
interface Flight {
  host: string;
  target: EdgeTarget;
  tried: Set<string>;
  attempt: number;
  replay: boolean;
  timedOut: boolean;
}

/** What the edge saw of one answered request (statistics, issue 11, aggregate these in memory). */
export interface EdgeObservation {
  host: string;
  target: EdgeTarget | null;
  status: number;
  ms: number;
  /** bytes written to the visitor for this answer, headers included */
  bytes: number;
}

export interface EdgeProxyOptions {
  upstreamTimeoutMs: number;
  log: FastifyBaseLogger;
  observe?: (o: EdgeObservation) => void;
  /** static sites' files (targets with `site`); without it such a target has no upstream (503) */
  files?: StaticServe;
  /** ACME HTTP-01: the key authorization for a token (kernel.certificates.challenge), for any host */
  challenge?: (token: string) => Promise<string | null>;
}

/** an upstream that refused a connection is skipped by round robin this long (the store says soon whether it is gone) */
const EJECT_MS = 3000;
const NO_BODY = () => Readable.from([]);

/**
 * The proxying half of the edge: host → target (RouteCache) → access decision (EdgeAccess) → a replica by round
 * robin over keep-alive upstream connections (http-proxy-3 streams bodies and upgrades). A replayable request
 * (GET/HEAD without body) whose upstream failed before answering is sent once more, to another replica of a
 * freshly resolved target: a replica stopping during a rolling update loses no such request.
 */
export class EdgeProxy {
  private readonly proxy: ProxyServer;
  private readonly agent = new http.Agent({
    keepAlive: true,
    // idle upstream connections close before a typical server's 5 s keep-alive does, so none is reused as it closes
    timeout: 4000,
    maxSockets: 1024,
    maxFreeSockets: 256,
    scheduling: "lifo",
  });
  private readonly rr = new Map<string, number>();
  private readonly targets = new Map<string, URL>();
  private readonly ejected = new Map<string, number>();
  private readonly flights = new WeakMap<IncomingMessage, Flight>();
  private readonly upgraded = new Set<Duplex>();
  closing = false;

  constructor(
    private readonly routes: RouteCache,
    private readonly access: EdgeAccess,
    private readonly opts: EdgeProxyOptions,
  ) {
    this.proxy = createProxyServer({ xfwd: false, proxyTimeout: opts.upstreamTimeoutMs });
    // errors without a callback of their own (a client socket of an upgrade failing): nothing to answer
    this.proxy.on("error", (err, _req, res) => {
      opts.log.debug({ err: err.message }, "edge proxy error");
      if (res && "destroy" in res) res.destroy();
    });
    this.proxy.on("proxyReq", (proxyReq, req) => {
      proxyReq.on("timeout", () => {
        const flight = this.flights.get(req);
        if (flight) flight.timedOut = true;
      });
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
    this.proxy.on("proxyRes", (proxyRes, _req, res) => {
      const h = proxyRes.headers;
      // hop-by-hop from the upstream stays there; this hop's connection is the edge's to keep
      delete h["keep-alive"];
      h.connection =
        this.closing || !(res as ServerResponse & { shouldKeepAlive?: boolean }).shouldKeepAlive
          ? "close"
          : "keep-alive";
      if (h["set-cookie"]) h["set-cookie"] = appSetCookies(h["set-cookie"]);
    });
  }

  /** A plain HTTP request on the edge's listener. */
  handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.opts.challenge && req.method === "GET" && req.url?.startsWith(ACME_CHALLENGE))
      return answerChallenge(req.url, res, this.opts.challenge, this.opts.log);
    const started = performance.now();
    let routed: { host: string; target: EdgeTarget | null } = { host: "", target: null };
    if (this.opts.observe) {
      // a keep-alive connection answers one request at a time, so its counter's growth is this answer's size
      const written = req.socket.bytesWritten;
      res.once("finish", () =>
        this.opts.observe?.({
          ...routed,
          status: res.statusCode,
          ms: performance.now() - started,
          bytes: Math.max(0, req.socket.bytesWritten - written),
        }),
      );
    }
    if (this.closing) return sendPage(res, pages.shuttingDown(), req.method);
    // the common case without a wait: a cached route to a public app or site goes straight to its upstream or
    // files (other visibilities take the path below, through the access decision)
    const host = hostName(req.headers.host);
    const cached = host ? this.routes.peek(host) : undefined;
    if (cached?.target && cached.target.visibility === "public") {
      routed = { host: host!, target: cached.target };
      return this.forward(req, res, host!, cached.target);
    }
    void this.route(req)
      .then(async (found) => {
        if ("page" in found) return sendPage(res, found.page, req.method);
        routed = found;
        const decision = await this.access.decide(found.target, req, found.url);
        if (decision.kind === "deny") return sendPage(res, decision, req.method);
        if (decision.kind === "redirect") return sendRedirect(res, decision.location);
        this.forward(req, res, found.host, found.target);
      })
      .catch((err) => {
        this.opts.log.error({ err }, "edge request failed before reaching an upstream");
        sendPage(res, pages.storeDown(), req.method);
      });
  };

  private forward(req: IncomingMessage, res: ServerResponse, host: string, target: EdgeTarget): void {
    if (target.site && this.opts.files) return this.opts.files.serve(req, res, target.site);
    prepareUpstreamHeaders(req, false);
    const flight: Flight = { host, target, tried: new Set(), attempt: 0, replay: replayable(req), timedOut: false };
    this.flights.set(req, flight);
    this.send(req, res, flight);
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
        const upstream = this.pick(found.target, new Set());
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
    const proto = (req.socket as Duplex & { encrypted?: boolean }).encrypted ? "https" : "http";
    return { host, target, url: `${proto}://${req.headers.host}${req.url ?? "/"}` };
  }

  private send(req: IncomingMessage, res: ServerResponse, flight: Flight): void {
    const upstream = this.pick(flight.target, flight.tried);
    if (!upstream) return sendPage(res, flight.attempt === 0 ? pages.noReplica() : pages.badGateway(), req.method);
    flight.tried.add(upstream);
    const attempt = ++flight.attempt;
    this.proxy.web(
      req,
      res,
      {
        target: this.targetUrl(upstream),
        agent: this.agent,
        buffer: flight.replay && attempt > 1 ? NO_BODY() : undefined,
      },
      (err) => this.failed(req, res, flight, attempt, upstream, err),
    );
  }

  private failed(
    req: IncomingMessage,
    res: ServerResponse,
    flight: Flight,
    attempt: number,
    upstream: string,
    err: Error,
  ): void {
    if (attempt !== flight.attempt) return; // a late error of an attempt already replaced
    flight.attempt++; // and this one is settled: its further errors are late too
    const connect = isConnectError(err);
    if (connect) this.eject(upstream);
    if (res.headersSent) return void res.destroy(); // the answer was under way: cut it, never add to it
    if (req.socket.destroyed) return; // the visitor left
    if (flight.replay && attempt === 1 && !flight.timedOut) {
      this.opts.log.debug({ err: err.message, upstream, host: flight.host }, "edge retrying on another replica");
      this.routes.drop(flight.host);
      void this.routes.get(flight.host, true).then(
        ({ target }) => {
          if (target && target.id === flight.target.id) flight.target = target;
          flight.attempt = attempt;
          this.send(req, res, flight);
        },
        () => {
          flight.attempt = attempt;
          this.send(req, res, flight);
        },
      );
      return;
    }
    this.opts.log.warn({ err: err.message, upstream, host: flight.host }, "edge upstream failed");
    sendPage(res, flight.timedOut ? pages.gatewayTimeout() : pages.badGateway(), req.method);
  }

  /** Round robin over the target's replicas, skipping those already tried for this request and, while others remain, those just seen failing. */
  private pick(target: EdgeTarget, tried: Set<string>): string | null {
    const ups = target.upstreams;
    if (!ups.length) return null;
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

  /** the parsed URL of an upstream address, kept (the library would parse the string on every request) */
  private targetUrl(upstream: string): URL {
    let url = this.targets.get(upstream);
    if (!url) {
      if (this.targets.size > 10_000) this.targets.clear();
      url = new URL(`http://${upstream}`);
      this.targets.set(upstream, url);
    }
    return url;
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
  close(): void {
    this.beginClose();
    this.agent.destroy();
  }
}

const CONNECT_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ECONNABORTED"]);

function isConnectError(err: Error): boolean {
  return CONNECT_CODES.has((err as NodeJS.ErrnoException).code ?? "");
}
