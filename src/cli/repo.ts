import { countOf, type Queryable } from "../store/db.js";
import { xactLock } from "../store/locks.js";
import type { Owner } from "../kernel/owner.js";

/** Serialises one account's reports until the transaction ends, so concurrent requests count each other. */
export async function lockAccountReports(q: Queryable, accountId: string): Promise<void> {
  await xactLock(q, `cli_errors:${accountId}`);
}

export async function countRecentReports(q: Queryable, accountId: string): Promise<number> {
  return countOf(
    q,
    "SELECT count(*)::int AS n FROM cli_error_reports WHERE account_id = $1 AND received_at > now() - interval '24 hours'",
    [accountId],
  );
}

export async function insertReports(
  q: Queryable,
  r: { accountId: string; owner: Owner; tokenId: string; reports: unknown[] },
): Promise<void> {
  await q.query(
    "INSERT INTO cli_error_reports (account_id, owner_kind, owner_id, token_id, report) SELECT $1, $2, $3, $4, r FROM jsonb_array_elements($5::jsonb) r",
    [r.accountId, r.owner.kind, r.owner.id, r.tokenId, JSON.stringify(r.reports)],
  );
}

export async function deleteReportsOlderThan(q: Queryable, days: number): Promise<void> {
  await q.query("DELETE FROM cli_error_reports WHERE received_at < now() - make_interval(days => $1)", [days]);
}
