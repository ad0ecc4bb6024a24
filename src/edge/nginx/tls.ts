import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { TlsCertificates } from "../../certificates/contract.js";
import type { Queryable } from "../../store/db.js";
import { hostName } from "../config.js";
import type { PemPair } from "../fallback-cert.js";
import { OnDemandCertificates } from "../tls-listener.js";

export interface NginxTlsOptions {
  db: Queryable;
  /** the certificates area; null: every name gets the fallback */
  certificates: TlsCertificates | null;
  /** whether the edge serves host (only those get certificates on demand) */
  routed: (host: string) => Promise<boolean>;
  /** while false (the NOTIFY listener is down) nginx keeps no certificate */
  live: () => boolean;
  /** the header value nginx sends (and its admin server asks for) */
  secret: string;
  admin: (pathname: string, body: string) => Promise<string | null>;
  log: FastifyBaseLogger;
}

/** a host's certificate is kept this long without a NOTIFY (never past its expiry), as tls-listener.ts does */
const KEEP_S = 3600;
/** a host without one is asked again after this (or at once on its NOTIFY) */
const MISSING_S = 30;
/** between the certificate chain and the key in an answer (tls-lua.ts splits there) */
export const KEY_MARK = "--edge-key--";

/**
 * HTTPS in nginx (README "TLS in nginx"): nginx listens on EDGE_TLS_PORT and chooses the certificate by SNI in
 * `ssl_certificate_by_lua` from its `edge_certs` dict; a name it does not hold it asks of this loopback server
 * (`GET /cert?host=`, the secret header), which answers from `kernel.certificates.load` with how long to keep it,
 * and asks for a certificate on demand for a served host without one (at most once per host per 5 minutes), as
 * the Node TLS listener does. A certificate's NOTIFY drops its host from the dict (`/certs`), so the next handshake
 * gets the new one. No SNI, no certificate, or the platform unreachable: nginx's fallback certificate.
 */
export class NginxTls {
  private server: http.Server | null = null;
  private readonly onDemand: OnDemandCertificates;

  constructor(private readonly opts: NginxTlsOptions) {
    this.onDemand = new OnDemandCertificates(opts);
  }

  /** the certificate server's loopback port */
  async start(): Promise<number> {
    const server = http.createServer((req, res) => void this.answer(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return (server.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A certificate changed (the NOTIFY names its host); null: anything may have. */
  invalidate(host: string | null): void {
    const name = host ? hostName(host) : null;
    void this.opts
      .admin("/certs", name ? `del ${name}` : "flush")
      .catch((err: unknown) => this.opts.log.warn({ err }, "edge nginx did not take a certificate change"));
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.headers["x-platform-edge"] !== this.opts.secret) {
      res.writeHead(403).end();
      return;
    }
    const host = hostName(new URL(req.url ?? "/", "http://edge").searchParams.get("host") ?? "");
    try {
      const keep = this.opts.live();
      const cert = host && this.opts.certificates ? await this.opts.certificates.load(this.opts.db, host) : null;
      if (cert) {
        const left = Math.floor((cert.notAfter.getTime() - Date.now()) / 1000);
        const seconds = keep ? Math.max(0, Math.min(KEEP_S, left)) : 0;
        res.writeHead(200).end(`${seconds}\n${cert.certPem.trim()}\n${KEY_MARK}\n${cert.keyPem.trim()}\n`);
        return;
      }
      if (host && this.opts.certificates) void this.onDemand.request(host);
      res.writeHead(200).end(`${keep ? MISSING_S : 0}\n`);
    } catch (err) {
      this.opts.log.warn({ err, host }, "edge certificate lookup failed; fallback certificate served");
      res.writeHead(503).end();
    }
  }
}

/** the fallback pair as one file nginx reads at start (ssl_certificate and ssl_certificate_key) */
export async function writeFallback(dir: string, pair: PemPair): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, "fallback.pem");
  await writeFile(file, `${pair.certPem.trim()}\n${pair.keyPem.trim()}\n`, { mode: 0o600 });
  return file;
}
