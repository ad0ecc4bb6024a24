import tls, { type SecureContext } from "node:tls";
import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../store/db.js";
import type { TlsCertificates } from "../certificates/contract.js";
import { hostName } from "./config.js";
import type { PemPair } from "./fallback-cert.js";
import type { EdgeProxy } from "./proxy.js";
import { EdgeListener, type ListenerOptions } from "./server.js";

/** a host's certificate is trusted this long without a NOTIFY (and never past its expiry) */
const CONTEXT_TTL_MS = 3_600_000;
/** a host without a certificate is asked again after this, or at once on its NOTIFY */
const MISSING_TTL_MS = 30_000;
/** on-demand requests: at most one per host and process in this window (the store says whether one is due) */
const REQUEST_EVERY_MS = 5 * 60_000;
const MAX_ENTRIES = 50_000;

/**
 * On-demand certificate requests for hosts the edge serves without one, for the Node TLS listener and nginx's
 * certificate server alike: at most one per host and process per window.
 */
export class OnDemandCertificates {
  private readonly requested = new Map<string, number>();

  constructor(private readonly opts: Pick<TlsListenerOptions, "db" | "certificates" | "routed" | "log">) {}

  async request(host: string): Promise<void> {
    const last = this.requested.get(host);
    if (last !== undefined && Date.now() - last < REQUEST_EVERY_MS) return;
    if (this.requested.size >= MAX_ENTRIES) this.requested.clear();
    this.requested.set(host, Date.now());
    try {
      // a host nobody serves is asked again at its next handshake (an app created meanwhile gets its certificate)
      if (!(await this.opts.routed(host))) return void this.requested.delete(host);
      await this.opts.certificates!.request(this.opts.db, host);
    } catch (err) {
      this.opts.log.warn({ err, host }, "on-demand certificate request failed");
    }
  }
}

interface Entry {
  context: SecureContext | null;
  expires: number;
}

export interface TlsListenerOptions extends ListenerOptions {
  db: Queryable;
  /** the certificates area; null: every name gets the fallback */
  certificates: TlsCertificates | null;
  fallback: PemPair;
  /** whether the edge serves host (only those get certificates on demand) */
  routed: (host: string) => Promise<boolean>;
  /** while false (the NOTIFY listener is down) nothing is cached */
  live: () => boolean;
  log: FastifyBaseLogger;
}

/**
 * The edge's HTTPS listener: the same proxy as the plain listener, with the certificate chosen by SNI. A host's
 * certificate (kernel.use("certificates").load) becomes a TLS context kept per host until the `tls_certificates` NOTIFY
 * for that host (every edge process, at commit), an hour, or its expiry. A host without one gets the fallback
 * certificate; when the edge routes that host, a certificate is requested (on demand, rate-limited per host), and
 * its NOTIFY makes the next handshake use it.
 */
export class EdgeTlsListener {
  private readonly listener: EdgeListener;
  private readonly contexts = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<SecureContext | null>>();
  private readonly onDemand: OnDemandCertificates;
  private readonly fallback: SecureContext;
  private generation = 0;

  constructor(
    proxy: EdgeProxy,
    private readonly opts: TlsListenerOptions,
  ) {
    this.fallback = tls.createSecureContext({ cert: opts.fallback.certPem, key: opts.fallback.keyPem });
    this.onDemand = new OnDemandCertificates(opts);
    this.listener = new EdgeListener(proxy, {
      ...opts,
      tls: {
        cert: opts.fallback.certPem,
        key: opts.fallback.keyPem,
        SNICallback: this.sni,
        handshakeTimeout: opts.http.headersTimeoutMs,
      },
    });
  }

  get port(): number | null {
    return this.listener.port;
  }

  listen(): Promise<number> {
    return this.listener.listen();
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  /** A certificate changed (the NOTIFY's payload names the host); null: anything may have changed. */
  invalidate(host: string | null): void {
    this.generation++;
    this.loading.clear();
    if (host === null || !host) this.contexts.clear();
    else this.contexts.delete(host.toLowerCase());
  }

  private sni = (servername: string, done: (err: Error | null, ctx?: SecureContext) => void): void => {
    const host = hostName(servername);
    if (!host || !this.opts.certificates) return done(null, this.fallback);
    this.context(host).then(
      (context) => done(null, context ?? this.fallback),
      (err) => {
        this.opts.log.warn({ err, host }, "edge certificate lookup failed; fallback certificate served");
        done(null, this.fallback);
      },
    );
  };

  private context(host: string): Promise<SecureContext | null> {
    const live = this.opts.live();
    if (live) {
      const hit = this.contexts.get(host);
      if (hit && hit.expires > Date.now()) return Promise.resolve(hit.context);
      const pending = this.loading.get(host);
      if (pending) return pending;
    }
    const generation = this.generation;
    const pending = this.load(host).then((entry) => {
      if (this.opts.live() && this.generation === generation) {
        if (this.contexts.size >= MAX_ENTRIES) this.contexts.clear();
        this.contexts.set(host, entry);
      }
      if (this.loading.get(host) === pending) this.loading.delete(host);
      return entry.context;
    });
    pending.catch(() => this.loading.get(host) === pending && this.loading.delete(host));
    this.loading.set(host, pending);
    return pending;
  }

  private async load(host: string): Promise<Entry> {
    const cert = await this.opts.certificates!.load(this.opts.db, host);
    if (cert) {
      const context = tls.createSecureContext({ cert: cert.certPem, key: cert.keyPem });
      return { context, expires: Math.min(Date.now() + CONTEXT_TTL_MS, cert.notAfter.getTime()) };
    }
    void this.onDemand.request(host);
    return { context: null, expires: Date.now() + MISSING_TTL_MS };
  }
}
