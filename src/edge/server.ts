import http from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyBaseLogger } from "fastify";
import type { HttpTimeouts } from "../config/config.js";
import type { EdgeProxy } from "./proxy.js";

export interface ListenerOptions {
  port: number;
  host: string;
  requestTimeoutMs: number;
  drainMs: number;
  http: HttpTimeouts;
  log: FastifyBaseLogger;
}

/**
 * The edge's plain-HTTP listener: one node server handing requests and upgrades to the proxy. (The HTTPS
 * listener with SNI, issue 11, is a second server over the same two handlers.) Slow clients are dropped by the
 * same header and keep-alive limits as the API's; a whole request may take EDGE_REQUEST_TIMEOUT_MS (uploads).
 */
export class EdgeListener {
  private server: http.Server | null = null;

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
    const server = http.createServer({
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: this.opts.requestTimeoutMs,
      keepAliveTimeout: t.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(t.headersTimeoutMs / 4))),
    });
    server.on("request", this.proxy.handle);
    server.on("upgrade", this.proxy.upgrade);
    server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
      if (!socket.writable || err.code === "ECONNRESET") return void socket.destroy();
      const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.server = server;
    this.opts.log.info({ port: this.port, host: this.opts.host }, "edge listening");
    return this.port!;
  }

  /** Stops taking connections, lets in-flight requests finish for up to EDGE_DRAIN_MS, then cuts what is left. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.proxy.beginClose();
    if (!server) return this.proxy.close();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), this.opts.drainMs);
    // keep-alive connections that finish a request while draining are closed as they go idle
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    await closed;
    clearTimeout(force);
    clearInterval(idle);
    this.proxy.close();
  }
}
