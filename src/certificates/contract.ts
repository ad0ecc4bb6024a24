/** What the certificates area provides the others (capability "certificates"). */
import type { Queryable } from "../store/db.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    /** without it the edge serves plain HTTP only */
    certificates: TlsCertificates;
  }
}

/** The certificates area, for the edge's HTTPS listener and the areas that add host names (custom domains). */
export interface TlsCertificates {
  /** NOTIFY channel announcing a stored or renewed certificate */
  channel: string;
  /** asks for a certificate for host; idempotent, issued by a job (ACME) */
  request(q: Queryable, host: string): Promise<void>;
  /** the current certificate and key (PEM) for host, or null */
  load(q: Queryable, host: string): Promise<{ certPem: string; keyPem: string; notAfter: Date } | null>;
  /** the key authorization for an ACME HTTP-01 token, or null (served at /.well-known/acme-challenge/<token>) */
  challenge(q: Queryable, token: string): Promise<string | null>;
  /**
   * Adds a listener called inside the transaction that records the first failed issuance in a row for a host (the
   * retries after it stay quiet until a success): the domains area records `domain.certificate_failed` there.
   */
  onIssuanceFailed(listener: IssuanceFailedListener): void;
}

export type IssuanceFailedListener = (
  q: Queryable,
  failure: { host: string; error: string; retryInSeconds: number },
) => Promise<void>;
