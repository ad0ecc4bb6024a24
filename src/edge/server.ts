import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { FastifyBaseLogger } from "fastify";
import type { HttpTimeouts } from "../config/config.js";
import type { EdgeProxy } from "./proxy.js";
import { bindError } from "../kernel/components.js";
import type { Duplex } from "node:stream";
import { takeForwarded } from "./headers.js";

export interface ListenerOptions {
  port: number;
  host: string;
  requestTimeoutMs: number;
  drainMs: number;
  http: HttpTimeouts;
  log: FastifyBaseLogger;
  /** HTTPS: the TLS options (SNICallback, fallback certificate) of tls-listener.ts */
  tls?: https.ServerOptions;
  /** the loopback listener behind nginx: requests carrying this secret are nginx's, its forwarding headers trusted */
  behindNginx?: string;
}

/**
 * One of the edge's listeners: a node server (plain HTTP, or HTTPS with `tls`) handing requests and upgrades to
 * the proxy they share. Slow clients are dropped by the same header and keep-alive limits as the API's; a whole
 * request may take EDGE_REQUEST_TIMEOUT_MS (uploads).
 */
export class EdgeListener {
  private server: http.Server | https.Server | null = null;

  constructor(
    private readonly proxy: EdgeProxy,
    private readonly opts: ListenerOptions,
  ) {}

  /** the bound port (EDGE_PORT=0 picks a free one), null when not listening */
  get port(): number | null {
    const address = this.server?.address();
    return address && typeof address === "object" ? (address as AddressInfo).port : null;
  }

  async listen(): Promise<number> {
    const { http: t } = this.opts;
    const limits: http.ServerOptions = {
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: this.opts.requestTimeoutMs,
      keepAliveTimeout: t.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(t.headersTimeoutMs / 4))),
    };
    const server = this.opts.tls ? https.createServer({ ...limits, ...this.opts.tls }) : http.createServer(limits);
    const secret = this.opts.behindNginx;
    if (secret) {
      const { handle, upgrade } = this.proxy;
      server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
        takeForwarded(req, secret);
        handle(req, res);
      });
      server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
        takeForwarded(req, secret);
        upgrade(req, socket, head);
      });
    } else {
      server.on("request", this.proxy.handle);
      server.on("upgrade", this.proxy.upgrade);
    }
    server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
      if (!socket.writable || err.code === "ECONNRESET") return void socket.destroy();
      const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    });
    await new Promise<void>((resolve, reject) => {
      // a port that cannot be bound is a start-up error naming the variable (exit 2), not a crash to restart
      const tls = !!this.opts.tls;
      const failed = (err: Error) => reject(bindError(tls ? "EDGE_TLS_PORT" : "EDGE_PORT", this.opts.port, err, tls));
      server.once("error", failed);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off("error", failed);
        resolve();
      });
    });
    this.server = server;
    this.opts.log.info(
      { port: this.port, host: this.opts.host, tls: !!this.opts.tls, behindNginx: !!secret },
      "edge listening",
    );
    return this.port!;
  }

  /**
   * Stops taking connections, lets in-flight requests finish for up to EDGE_DRAIN_MS, then cuts what is left.
   * The proxy is shared by the edge's listeners: its owner (Edge.stop) closes it once every listener drained.
   */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.proxy.beginClose();
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), this.opts.drainMs);
    // keep-alive connections that finish a request while draining are closed as they go idle
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    await closed;
    clearTimeout(force);
    clearInterval(idle);
  }
}
