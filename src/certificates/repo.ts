import { oneRow, type Queryable } from "../store/db.js";

/** Every row of tls_certificates (migration 020). */
export interface CertificateRow {
  host: string;
  status: "pending" | "valid" | "failed";
  cert_pem: string | null;
  key_sealed: string | null;
  not_before: Date | null;
  not_after: Date | null;
  issuer: string | null;
  directory_url: string | null;
  last_error: string | null;
  attempts: number;
  next_attempt_at: Date;
  claim: string | null;
  claimed_until: Date | null;
  issued_at: Date | null;
  requested_at: Date;
  updated_at: Date;
}

/**
 * What makes a row due for an issuance (the same test in request, claim and the renewal sweep): nobody holds it,
 * its back-off is over, and it has no certificate, one expiring within the renewal window, or one from another
 * directory (ACME_DIRECTORY_URL changed, e.g. from staging to production). `days` and `dir` name the parameters.
 */
const due = (
  days: string,
  dir: string,
) => `(claimed_until IS NULL OR claimed_until < now()) AND next_attempt_at <= now()
  AND (status <> 'valid' OR not_after < now() + make_interval(days => ${days}::int) OR directory_url IS DISTINCT FROM ${dir}::text)`;

/** Records that host wants a certificate (idempotent); whether an issuance is due now. */
export async function requestCertificate(
  q: Queryable,
  host: string,
  renewDays: number,
  directoryUrl: string | null,
): Promise<boolean> {
  const { rows } = await q.query<{ due: boolean }>(
    `INSERT INTO tls_certificates (host) VALUES ($1)
     ON CONFLICT (host) DO UPDATE SET requested_at = now()
     RETURNING ${due("$2", "$3")} AS due`,
    [host, renewDays, directoryUrl],
  );
  return rows[0].due;
}

/** The stored certificate of host while it has not expired. */
export async function currentCertificate(
  q: Queryable,
  host: string,
): Promise<Pick<CertificateRow, "cert_pem" | "key_sealed" | "not_after"> | null> {
  return oneRow(
    q,
    `SELECT cert_pem, key_sealed, not_after FROM tls_certificates
     WHERE host = $1 AND cert_pem IS NOT NULL AND not_after > now()`,
    [host],
  );
}

export async function findCertificate(q: Queryable, host: string): Promise<CertificateRow | null> {
  return oneRow<CertificateRow>(q, "SELECT * FROM tls_certificates WHERE host = $1", [host]);
}

/**
 * Takes host's issuance for this process when it is due and nobody holds it (one issuance per host at a time,
 * across processes); the claim lapses after `seconds` should the process die meanwhile.
 */
export async function claimIssuance(
  q: Queryable,
  host: string,
  claim: string,
  renewDays: number,
  directoryUrl: string,
  seconds: number,
): Promise<{ attempts: number } | null> {
  return oneRow<{ attempts: number }>(
    q,
    `UPDATE tls_certificates SET claim = $4, claimed_until = now() + make_interval(secs => $5), updated_at = now()
     WHERE host = $1 AND ${due("$2", "$3")}
     RETURNING attempts`,
    [host, renewDays, directoryUrl, claim, seconds],
  );
}

/** Stores an issued certificate under the claim that asked for it; false when the claim was lost meanwhile. */
export async function storeIssued(
  q: Queryable,
  host: string,
  claim: string,
  cert: { certPem: string; keySealed: string; notBefore: Date; notAfter: Date; issuer: string; directoryUrl: string },
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE tls_certificates SET status = 'valid', cert_pem = $3, key_sealed = $4, not_before = $5, not_after = $6,
       issuer = $7, directory_url = $8, last_error = NULL, attempts = 0, next_attempt_at = now(), claim = NULL,
       claimed_until = NULL, issued_at = now(), updated_at = now()
     WHERE host = $1 AND claim = $2`,
    [host, claim, cert.certPem, cert.keySealed, cert.notBefore, cert.notAfter, cert.issuer, cert.directoryUrl],
  );
  return rowCount === 1;
}

/**
 * Records a failed issuance: a certificate still valid stays served (status valid, the error shown beside it),
 * otherwise the row is failed; the next attempt waits `delaySeconds`. False when the claim was lost meanwhile.
 */
export async function recordFailure(
  q: Queryable,
  host: string,
  claim: string,
  error: string,
  delaySeconds: number,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE tls_certificates SET
       status = CASE WHEN cert_pem IS NOT NULL AND not_after > now() THEN 'valid' ELSE 'failed' END,
       last_error = $3, attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $4),
       claim = NULL, claimed_until = NULL, updated_at = now()
     WHERE host = $1 AND claim = $2`,
    [host, claim, error, delaySeconds],
  );
  return rowCount === 1;
}

/** Hosts due for an issuance: never issued, failed and past their back-off, expiring within the window. */
export async function dueHosts(
  q: Queryable,
  renewDays: number,
  directoryUrl: string,
  limit: number,
): Promise<string[]> {
  const { rows } = await q.query<{ host: string }>(
    `SELECT host FROM tls_certificates WHERE ${due("$1", "$2")} ORDER BY next_attempt_at LIMIT $3`,
    [renewDays, directoryUrl, limit],
  );
  return rows.map((r) => r.host);
}

export interface AcmeAccountRow {
  directory_url: string;
  key_sealed: string;
  account_url: string | null;
}

/** The account for a directory; `keySealed` is stored only when none exists yet (the first writer's key wins). */
export async function acmeAccount(
  q: Queryable,
  directoryUrl: string,
  keySealed: string,
  email: string | null,
): Promise<AcmeAccountRow> {
  await q.query(
    `INSERT INTO acme_accounts (directory_url, key_sealed, email) VALUES ($1, $2, $3)
     ON CONFLICT (directory_url) DO NOTHING`,
    [directoryUrl, keySealed, email],
  );
  const { rows } = await q.query<AcmeAccountRow>(
    "SELECT directory_url, key_sealed, account_url FROM acme_accounts WHERE directory_url = $1",
    [directoryUrl],
  );
  return rows[0];
}

export async function setAccountUrl(q: Queryable, directoryUrl: string, accountUrl: string | null): Promise<void> {
  await q.query("UPDATE acme_accounts SET account_url = $2 WHERE directory_url = $1", [directoryUrl, accountUrl]);
}

export async function putChallenge(
  q: Queryable,
  token: string,
  host: string,
  keyAuthorization: string,
  seconds: number,
): Promise<void> {
  await q.query(
    `INSERT INTO acme_challenges (token, host, key_authorization, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4))
     ON CONFLICT (token) DO UPDATE SET host = $2, key_authorization = $3, expires_at = EXCLUDED.expires_at`,
    [token, host, keyAuthorization, seconds],
  );
}

export async function dropChallenge(q: Queryable, token: string): Promise<void> {
  await q.query("DELETE FROM acme_challenges WHERE token = $1", [token]);
}

export async function challengeAnswer(q: Queryable, token: string): Promise<string | null> {
  const { rows } = await q.query<{ key_authorization: string }>(
    "SELECT key_authorization FROM acme_challenges WHERE token = $1 AND expires_at > now()",
    [token],
  );
  return rows[0]?.key_authorization ?? null;
}

export async function dropExpiredChallenges(q: Queryable): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM acme_challenges WHERE expires_at < now()");
  return rowCount ?? 0;
}
