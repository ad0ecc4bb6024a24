/**
 * Usage of a suite-billed organization's company assets made by billing's own meter, from test metering sources (as
 * their areas would report them), in chosen past intervals; and what the suite and the ledger then hold.
 */
import { randomUUID } from "node:crypto";
import type { TestApp } from "../helpers/app.js";
import { meterInterval } from "../../src/billing/metering/meter.js";
import type { MeteredResource, MeteringSource } from "../../src/kernel/contracts.js";

/** basic database with 50 GB: 3 won instance + 0.75 won storage per 5-minute interval */
export const DB_MICRO_PER_INTERVAL = 3_750_000;
/** micro pod: 12 KRW/h, 1 won per interval */
export const POD_MICRO_PER_INTERVAL = 1_000_000;

export function asset(orgId: string, accountId: string, kind: "database" | "pod"): MeteredResource {
  return {
    id: randomUUID(),
    owner: { kind: "org", id: orgId },
    accountId,
    kind,
    size: kind === "database" ? "basic" : "micro",
    storageGb: kind === "database" ? 50 : 0,
    state: "running",
  };
}

/** Meters one interval of these resources with the platform's payer (the suite wallet for a suite organization). */
export async function meterAt(t: TestApp, at: Date, rows: MeteredResource[]): Promise<void> {
  const kinds = [...new Set(rows.map((r) => r.kind))];
  const sources: MeteringSource[] = kinds.map((kind) => ({
    kind,
    billable: async (_q, page) => (page.after ? [] : rows.filter((r) => r.kind === kind)),
    billableOf: async () => [],
  }));
  await meterInterval(t.db, sources, at, { payer: (q, o, a) => t.platform.kernel.payer(q, o, a) });
}

export async function reportRows(t: TestApp, orgId: string) {
  const { rows } = await t.db.query<{
    account_id: string;
    hour: Date;
    usage_micro: number;
    carry_in_micro: number;
    amount_krw: number;
    carry_out_micro: number;
    status: string;
    attempts: number;
    last_error: string | null;
    idempotency_key: string;
  }>(
    `SELECT account_id::text, hour, usage_micro::float8 AS usage_micro, carry_in_micro::float8 AS carry_in_micro,
            amount_krw::float8 AS amount_krw, carry_out_micro::float8 AS carry_out_micro, status, attempts, last_error,
            idempotency_key
       FROM suite_usage_reports WHERE org_id = $1 ORDER BY hour, account_id`,
    [orgId],
  );
  return rows;
}

/** The organization's KRW wallet balance and what the suite receivable paid it. */
export async function ledgerOf(t: TestApp, orgId: string) {
  const { rows } = await t.db.query<{ balance: number; credited: number; credits: number }>(
    `SELECT w.balance::float8 AS balance,
            (SELECT coalesce(sum(e.amount), 0)::float8 FROM ledger_entries e JOIN ledger_transactions x ON x.id = e.transaction_id
              WHERE e.wallet_id = w.id AND x.idempotency_key LIKE 'suite-report:%') AS credited,
            (SELECT count(*)::int FROM ledger_transactions x JOIN ledger_entries e ON e.transaction_id = x.id
              WHERE e.wallet_id = w.id AND x.idempotency_key LIKE 'suite-report:%') AS credits
       FROM ledger_wallets w WHERE w.owner_kind = 'org' AND w.owner_id = $1 AND w.currency = 'KRW'`,
    [orgId],
  );
  return rows[0];
}
