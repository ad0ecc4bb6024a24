/** SQL of the suite's sign-in: sign-ins in progress, login codes, recovery codes, links and identities. */
import { oneRow, oneValue, returnedRow, type Queryable } from "../../store/db.js";
import { xactLock } from "../../store/locks.js";

export type JoinPolicy = "all" | "departments" | "invite";

export interface LinkRow {
  org_id: string;
  issuer: string;
  company_id: string;
  linked_by: string;
  join_policy: JoinPolicy;
  join_units: string[];
  stop_on_exhausted: boolean;
  setup_done_at: Date | null;
  setup_done_by: string | null;
  created_at: Date;
  updated_at: Date;
}

const LINK_COLUMNS = `org_id, issuer, company_id, linked_by, join_policy, join_units, stop_on_exhausted, setup_done_at,
  setup_done_by, created_at, updated_at`;

export interface IdentityRow {
  account_id: string;
  issuer: string;
  company_id: string;
  subject: string;
  email: string | null;
  token_expires_at: Date | null;
  last_login_at: Date | null;
  deprovisioned_at: Date | null;
}

// ---- sign-ins in progress

export const STATE_TTL_MINUTES = 10;

export async function saveState(
  q: Queryable,
  s: { state: string; nonce: string; codeVerifier: string; returnTo: string; browserHash: Buffer },
): Promise<void> {
  // old unfinished sign-ins go as new ones start: the table holds about ten minutes of them
  await q.query(`DELETE FROM suite_sign_in_states WHERE created_at < now() - interval '${STATE_TTL_MINUTES} minutes'`);
  await q.query(
    `INSERT INTO suite_sign_in_states (state, nonce, code_verifier, return_to, browser_hash)
     VALUES ($1, $2, $3, $4, $5)`,
    [s.state, s.nonce, s.codeVerifier, s.returnTo, s.browserHash],
  );
}

/** Takes a started sign-in once (a replayed state finds nothing); null when unknown, used or older than 10 minutes. */
export async function takeState(
  q: Queryable,
  state: string,
): Promise<{
  state: string;
  nonce: string;
  code_verifier: string;
  return_to: string;
  browser_hash: Buffer | null;
} | null> {
  const { rows } = await q.query<{
    state: string;
    nonce: string;
    code_verifier: string;
    return_to: string;
    browser_hash: Buffer | null;
    fresh: boolean;
  }>(
    `DELETE FROM suite_sign_in_states WHERE state = $1
     RETURNING state, nonce, code_verifier, return_to, browser_hash,
               created_at > now() - interval '${STATE_TTL_MINUTES} minutes' AS fresh`,
    [state],
  );
  const r = rows[0];
  return r?.fresh ? r : null;
}

/** The return address of a started sign-in without taking it (where a refusal sends the browser). */
export async function peekReturnTo(q: Queryable, state: string): Promise<string | null> {
  return oneValue<string>(q, "return_to", "SELECT return_to FROM suite_sign_in_states WHERE state = $1", [state]);
}

// ---- one-time login codes

export async function insertLoginCode(
  q: Queryable,
  c: { codeHash: Buffer; accountId: string; orgId: string; ttlSeconds: number; browserHash: Buffer | null },
): Promise<void> {
  await q.query("DELETE FROM suite_login_codes WHERE expires_at < now() - interval '1 day'");
  await q.query(
    `INSERT INTO suite_login_codes (code_hash, account_id, org_id, expires_at, browser_hash)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4), $5)`,
    [c.codeHash, c.accountId, c.orgId, c.ttlSeconds, c.browserHash],
  );
}

/**
 * Uses a login code once; null when unknown, used or expired. With `browserHash` (the console's exchange) the code
 * must come from a sign-in started in that browser; a code of another browser is left unused.
 */
export async function takeLoginCode(
  q: Queryable,
  codeHash: Buffer,
  browserHash?: Buffer | null,
): Promise<{ account_id: string; org_id: string } | null> {
  return oneRow<{ account_id: string; org_id: string }>(
    q,
    `UPDATE suite_login_codes SET used_at = now()
      WHERE code_hash = $1 AND used_at IS NULL AND expires_at > now()
        AND ($2::boolean IS NOT TRUE OR browser_hash = $3)
      RETURNING account_id, org_id`,
    [codeHash, browserHash !== undefined, browserHash ?? null],
  );
}

// ---- recovery codes

export async function putRecoveryCode(
  q: Queryable,
  r: { orgId: string; accountId: string; email: string; codeHash: Buffer },
): Promise<void> {
  await q.query(
    `INSERT INTO suite_recovery_codes (org_id, account_id, email, code_hash) VALUES ($1, $2, lower($3), $4)
     ON CONFLICT (org_id) DO UPDATE
       SET account_id = EXCLUDED.account_id, email = EXCLUDED.email, code_hash = EXCLUDED.code_hash,
           created_at = now(), used_at = NULL`,
    [r.orgId, r.accountId, r.email, r.codeHash],
  );
}

/** Uses a recovery code once: the organization and the account it was made for; null when no such unused code. */
export async function takeRecoveryCode(
  q: Queryable,
  email: string,
  codeHash: Buffer,
): Promise<{ org_id: string; account_id: string; email: string } | null> {
  return oneRow<{ org_id: string; account_id: string; email: string }>(
    q,
    `UPDATE suite_recovery_codes SET used_at = now()
      WHERE code_hash = $1 AND email = lower($2) AND used_at IS NULL
      RETURNING org_id, account_id, email`,
    [codeHash, email],
  );
}

// ---- links

/** One sign-in of a company at a time: linking, joining and the policy decision never race. */
export async function lockCompany(q: Queryable, issuer: string, companyId: string): Promise<void> {
  await xactLock(q, `suite-company:${issuer} ${companyId}`);
}

export async function linkOfCompany(q: Queryable, issuer: string, companyId: string): Promise<LinkRow | null> {
  return oneRow<LinkRow>(q, `SELECT ${LINK_COLUMNS} FROM suite_links WHERE issuer = $1 AND company_id = $2`, [
    issuer,
    companyId,
  ]);
}

export async function linkOfOrg(q: Queryable, orgId: string, lock = false): Promise<LinkRow | null> {
  return oneRow<LinkRow>(q, `SELECT ${LINK_COLUMNS} FROM suite_links WHERE org_id = $1${lock ? " FOR UPDATE" : ""}`, [
    orgId,
  ]);
}

export async function insertLink(
  q: Queryable,
  l: { orgId: string; issuer: string; companyId: string; linkedBy: string },
): Promise<LinkRow> {
  return returnedRow<LinkRow>(
    q,
    `INSERT INTO suite_links (org_id, issuer, company_id, linked_by) VALUES ($1, $2, $3, $4) RETURNING ${LINK_COLUMNS}`,
    [l.orgId, l.issuer, l.companyId, l.linkedBy],
  );
}

export async function setJoinPolicy(
  q: Queryable,
  orgId: string,
  policy: JoinPolicy,
  units: string[],
): Promise<LinkRow> {
  return returnedRow<LinkRow>(
    q,
    `UPDATE suite_links SET join_policy = $2, join_units = $3, updated_at = now() WHERE org_id = $1
     RETURNING ${LINK_COLUMNS}`,
    [orgId, policy, units],
  );
}

export async function finishSetup(q: Queryable, orgId: string, accountId: string): Promise<LinkRow> {
  return returnedRow<LinkRow>(
    q,
    `UPDATE suite_links SET setup_done_at = COALESCE(setup_done_at, now()),
            setup_done_by = COALESCE(setup_done_by, $2), updated_at = now()
      WHERE org_id = $1 RETURNING ${LINK_COLUMNS}`,
    [orgId, accountId],
  );
}

// ---- identities

const IDENTITY_COLUMNS =
  "account_id, issuer, company_id, subject, email, token_expires_at, last_login_at, deprovisioned_at";

export async function identityOf(
  q: Queryable,
  issuer: string,
  companyId: string,
  subject: string,
): Promise<IdentityRow | null> {
  return oneRow<IdentityRow>(
    q,
    `SELECT ${IDENTITY_COLUMNS} FROM suite_identities WHERE issuer = $1 AND company_id = $2 AND subject = $3
     FOR UPDATE`,
    [issuer, companyId, subject],
  );
}

export async function deleteIdentity(q: Queryable, accountId: string): Promise<void> {
  await q.query("DELETE FROM suite_identities WHERE account_id = $1", [accountId]);
}

export async function identityEmail(q: Queryable, accountId: string): Promise<string | null> {
  return oneValue<string>(q, "email", "SELECT email FROM suite_identities WHERE account_id = $1", [accountId]);
}

export async function isSuiteAccount(q: Queryable, accountId: string): Promise<boolean> {
  const { rows } = await q.query({
    name: "suite-is-suite-account",
    text: "SELECT 1 FROM suite_identities WHERE account_id = $1",
    values: [accountId],
  });
  return rows.length > 0;
}

/** A sign-in's identity row: made on the first, refreshed (tokens, e-mail, back from deprovisioning) on each. */
export async function saveIdentity(
  q: Queryable,
  i: {
    accountId: string;
    issuer: string;
    companyId: string;
    subject: string;
    email: string | null;
    accessTokenSealed: string;
    refreshTokenSealed: string | null;
    tokenExpiresAt: Date | null;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO suite_identities (account_id, issuer, company_id, subject, email, access_token_sealed,
                                   refresh_token_sealed, token_expires_at, last_login_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
     ON CONFLICT (account_id) DO UPDATE
       SET email = EXCLUDED.email, access_token_sealed = EXCLUDED.access_token_sealed,
           refresh_token_sealed = COALESCE(EXCLUDED.refresh_token_sealed, suite_identities.refresh_token_sealed),
           token_expires_at = EXCLUDED.token_expires_at, last_login_at = now(), deprovisioned_at = NULL`,
    [
      i.accountId,
      i.issuer,
      i.companyId,
      i.subject,
      i.email,
      i.accessTokenSealed,
      i.refreshTokenSealed,
      i.tokenExpiresAt,
    ],
  );
}
