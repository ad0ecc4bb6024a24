import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { inTransaction, type Db, type Queryable } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import type { SecretBox } from "../kernel/secrets.js";
import type { IssuanceFailedListener, TlsCertificates } from "./contract.js";
import type { AcmeIssuer } from "./acme.js";
import { certificateHost } from "./config.js";
import * as repo from "./repo.js";

export const ISSUE_JOB = "certificates.issue";
export const RENEW_JOB = "certificates.renew";
export const CHANNEL = "tls_certificates";

const CERT_KEY = "tls_certificates.key_sealed";
/** an issuance not finished within this is taken over by another process (the job itself expires sooner) */
const CLAIM_SECONDS = 15 * 60;
/** how long a published HTTP-01 answer stays answerable if its removal never happens */
const CHALLENGE_SECONDS = 3600;
/** hosts one renewal sweep enqueues (the rest next time) */
const SWEEP_LIMIT = 500;

/** The back-off after the n-th failure in a row: 1 min, 4 min, 16 min, ... capped at a day. */
export function retryDelaySeconds(failures: number): number {
  return Math.min(86_400, 60 * 4 ** Math.max(0, failures - 1));
}

export interface CertificatesDeps {
  db: Db;
  secrets: SecretBox;
  jobs: JobQueue;
  log: FastifyBaseLogger;
  renewDays: number;
  /** null: ACME off (ACME_DIRECTORY_URL unset): requests are recorded, nothing is issued */
  issuer: AcmeIssuer | null;
}

/**
 * Certificates per host name (kernel.use("certificates")): requested by the areas that add host names and by the edge
 * for hosts it routes, issued and renewed by ACME jobs, keys sealed at rest. ACME trouble is recorded in the
 * host's row (status, last_error, attempts, next_attempt_at) and retried with back-off; it never reaches a caller.
 */
export class Certificates implements TlsCertificates {
  readonly channel = CHANNEL;
  private readonly failureListeners: IssuanceFailedListener[] = [];

  constructor(private readonly d: CertificatesDeps) {}

  onIssuanceFailed(listener: IssuanceFailedListener): void {
    this.failureListeners.push(listener);
  }

  get acmeEnabled(): boolean {
    return this.d.issuer !== null;
  }

  async request(q: Queryable, host: string): Promise<void> {
    const name = certificateHost(host);
    if (!name) {
      this.d.log.debug({ host }, "no certificate for a host that is not a DNS name");
      return;
    }
    const issuer = this.d.issuer;
    const due = await repo.requestCertificate(q, name, this.d.renewDays, issuer?.directoryUrl ?? null);
    if (!due || !issuer) return;
    // inside a caller's transaction the job starts a moment later, once the row is committed (a rolled back
    // request leaves the job nothing to do; one still uncommitted then is found by the renewal sweep)
    await this.d.jobs
      .send(ISSUE_JOB, { host: name }, { singletonKey: name, startAfterSeconds: q === this.d.db ? undefined : 2 })
      .catch((err) => this.d.log.warn({ err, host: name }, "certificate job not queued; the renewal sweep retries"));
  }

  async load(q: Queryable, host: string): Promise<{ certPem: string; keyPem: string; notAfter: Date } | null> {
    const row = await repo.currentCertificate(q, host);
    if (!row?.cert_pem || !row.key_sealed || !row.not_after) return null;
    return { certPem: row.cert_pem, keyPem: this.d.secrets.open(row.key_sealed, CERT_KEY), notAfter: row.not_after };
  }

  async challenge(q: Queryable, token: string): Promise<string | null> {
    if (!/^[A-Za-z0-9_-]{1,256}$/.test(token)) return null;
    return repo.challengeAnswer(q, token);
  }

  /**
   * The issuance job for one host: claims it (nothing to do when it is not due or another process holds it),
   * runs the ACME order and stores the chain and the sealed key, or records the failure and queues the retry.
   */
  async issue(host: string): Promise<void> {
    const issuer = this.d.issuer;
    if (!issuer) return;
    const { db, log } = this.d;
    const claim = randomUUID();
    const claimed = await repo.claimIssuance(db, host, claim, this.d.renewDays, issuer.directoryUrl, CLAIM_SECONDS);
    if (!claimed) return;
    try {
      const issued = await issuer.issue(host, {
        put: (token, h, keyAuthorization) => repo.putChallenge(db, token, h, keyAuthorization, CHALLENGE_SECONDS),
        drop: (token) => repo.dropChallenge(db, token),
      });
      const stored = await repo.storeIssued(db, host, claim, {
        certPem: issued.certPem,
        keySealed: this.d.secrets.seal(issued.keyPem, CERT_KEY),
        notBefore: issued.notBefore,
        notAfter: issued.notAfter,
        issuer: issued.issuer,
        directoryUrl: issuer.directoryUrl,
      });
      if (stored) log.info({ host, notAfter: issued.notAfter }, "certificate issued");
      else log.warn({ host }, "certificate issued after this process's claim lapsed; another issuance owns the row");
    } catch (err) {
      const message = errorText(err);
      const delay = retryDelaySeconds(claimed.attempts + 1);
      log.warn({ host, err: message, retryInSeconds: delay }, "certificate issuance failed");
      const recorded = await inTransaction(db, async (tx) => {
        if (!(await repo.recordFailure(tx, host, claim, message, delay))) return false;
        // the first failure in a row is news to the host's owner; the retries after it are not
        if (claimed.attempts === 0)
          for (const l of this.failureListeners) await l(tx, { host, error: message, retryInSeconds: delay });
        return true;
      });
      if (!recorded) return;
      await this.d.jobs
        .send(ISSUE_JOB, { host }, { singletonKey: host, startAfterSeconds: delay })
        .catch(() => log.warn({ host }, "certificate retry not queued; the renewal sweep retries"));
    }
  }

  /** The periodic sweep: queues every host due (expiring within ACME_RENEW_DAYS, or past its back-off). */
  async renewDue(): Promise<string[]> {
    const issuer = this.d.issuer;
    await repo.dropExpiredChallenges(this.d.db);
    if (!issuer) return [];
    const hosts = await repo.dueHosts(this.d.db, this.d.renewDays, issuer.directoryUrl, SWEEP_LIMIT);
    for (const host of hosts) await this.d.jobs.send(ISSUE_JOB, { host }, { singletonKey: host });
    if (hosts.length) this.d.log.info({ hosts: hosts.length }, "certificates due for issuance or renewal queued");
    return hosts;
  }
}

/** What a user may read of an ACME failure: one line, bounded (the CA's problem detail, a network error). */
function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, " ").trim().slice(0, 500) || "ACME issuance failed";
}
