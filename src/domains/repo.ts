import { allRows, anyRows, oneRow, type Queryable } from "../store/db.js";
import { recordEvent } from "../events/public.js";
import type { Owner, OwnerKind } from "../kernel/owner.js";
import { findByRef } from "../store/find.js";

export interface DomainRow {
  id: string;
  owner_kind: OwnerKind;
  owner_id: string;
  account_id: string;
  domain: string;
  app_kind: string;
  app_id: string;
  app_slug: string;
  verification_token: string;
  status: "pending" | "verified";
  verified_at: Date | null;
  verified_by: "txt" | "cname" | null;
  last_checked_at: Date | null;
  last_check: string | null;
  created_at: Date;
}

/** One of the owner's domains by id or by name (lower case). */
export async function findDomain(q: Queryable, owner: Owner, ref: string): Promise<DomainRow | null> {
  return findByRef<DomainRow>(q, { table: "custom_domains", refColumn: "domain" }, owner, ref, {
    refValue: (name) => name.toLowerCase().replace(/\.$/, ""),
  });
}

/** The owner's domains (of one app when appSlug is given), oldest first; refs narrow it for instance-limited keys. */
export async function listDomains(
  q: Queryable,
  owner: Owner,
  opts: { appSlug?: string; refs: string[] | null },
): Promise<DomainRow[]> {
  return allRows<DomainRow>(
    q,
    `SELECT * FROM custom_domains
      WHERE owner_kind = $1 AND owner_id = $2 AND ($3::text IS NULL OR app_slug = $3)
        AND ($4::text[] IS NULL OR id::text = ANY($4) OR domain = ANY($4))
      ORDER BY created_at, domain LIMIT 1000`,
    [owner.kind, owner.id, opts.appSlug ?? null, opts.refs],
  );
}

/** Inserts a pending domain; null when the name is registered already (by anyone). */
export async function insertDomain(
  q: Queryable,
  row: Pick<
    DomainRow,
    | "id"
    | "owner_kind"
    | "owner_id"
    | "account_id"
    | "domain"
    | "app_kind"
    | "app_id"
    | "app_slug"
    | "verification_token"
  >,
): Promise<DomainRow | null> {
  return oneRow<DomainRow>(
    q,
    `INSERT INTO custom_domains (id, owner_kind, owner_id, account_id, domain, app_kind, app_id, app_slug, verification_token, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending')
     ON CONFLICT (domain) DO NOTHING RETURNING *`,
    [
      row.id,
      row.owner_kind,
      row.owner_id,
      row.account_id,
      row.domain,
      row.app_kind,
      row.app_id,
      row.app_slug,
      row.verification_token,
    ],
  );
}

/** Whose a domain name is, and which slug it serves. */
export type DomainHolder = { owner_kind: OwnerKind; owner_id: string; app_slug: string };

/** Who holds a domain name, whoever it is; `verified`: only once it is verified (what the edge serves). */
export async function holderOf(q: Queryable, domain: string, verified = false): Promise<DomainHolder | null> {
  return oneRow<DomainHolder>(
    q,
    `SELECT owner_kind, owner_id, app_slug FROM custom_domains WHERE domain = $1${verified ? " AND status = 'verified'" : ""}`,
    [domain],
  );
}

/**
 * Records a verification attempt. A success verifies a pending domain (verified_at, verified_by); a failure only
 * records what was found (a verified domain stays verified). Null when the row is gone.
 */
export async function recordCheck(
  q: Queryable,
  id: string,
  check: { method: "txt" | "cname" | null; text: string },
): Promise<DomainRow | null> {
  const { rows } = await q.query<DomainRow>(
    `UPDATE custom_domains
        SET status = CASE WHEN $2::text IS NOT NULL THEN 'verified' ELSE status END,
            verified_at = CASE WHEN $2::text IS NOT NULL AND status = 'pending' THEN now() ELSE verified_at END,
            verified_by = CASE WHEN $2::text IS NOT NULL AND status = 'pending' THEN $2 ELSE verified_by END,
            last_checked_at = now(), last_check = $3
      WHERE id = $1 RETURNING *, verified_at = now() AS just_verified`,
    [id, check.method, check.text],
  );
  const d = rows[0] as (DomainRow & { just_verified?: boolean }) | undefined;
  if (d?.just_verified)
    await recordEvent(q, {
      type: "domain.verified",
      owner: { kind: d.owner_kind, id: d.owner_id },
      resource: { kind: "domain", id: d.id },
      data: { domain: d.domain, method: check.method },
    });
  if (d) delete d.just_verified;
  return d ?? null;
}

export async function deleteDomain(q: Queryable, id: string): Promise<boolean> {
  return anyRows(q, "DELETE FROM custom_domains WHERE id = $1", [id]);
}

/** `domain.certificate_failed` for the verified domain named host (other hosts, e.g. the platform's, have no owner to tell). */
export async function recordCertificateFailure(
  q: Queryable,
  f: { host: string; error: string; retryInSeconds: number },
): Promise<void> {
  const { rows } = await q.query<Pick<DomainRow, "id" | "owner_kind" | "owner_id" | "domain">>(
    "SELECT id, owner_kind, owner_id, domain FROM custom_domains WHERE domain = $1 AND status = 'verified'",
    [f.host],
  );
  for (const d of rows)
    await recordEvent(q, {
      type: "domain.certificate_failed",
      owner: { kind: d.owner_kind, id: d.owner_id },
      resource: { kind: "domain", id: d.id },
      data: { domain: d.domain, reason: f.error, retry_in_seconds: f.retryInSeconds },
    });
}
