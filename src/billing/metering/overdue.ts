import type { Db } from "../../store/db.js";
import type { JobQueue } from "../../jobs/queue.js";
import { enqueueSystem } from "../../databases/jobs.js";

export interface OverduePolicy {
  /** keep: paid resources go on running while overdue (default); pause: they are stopped after the grace period */
  action: "keep" | "pause";
  graceHours: number;
}

export const OVERDUE_PAUSE_REASON = "Paused because the account is overdue; it starts again once the balance is topped up.";

/**
 * What a balance running out does to running resources. New paid creation is blocked either way
 * (admission.ts). With action "pause", paid databases of accounts overdue past the grace period are
 * stopped, and started again by this same job once the wallet is no longer overdue.
 */
export async function enforceOverdue(db: Db, queue: Pick<JobQueue, "send">, policy: OverduePolicy): Promise<{ paused: string[]; resumed: string[] }> {
  if (policy.action === "keep") return { paused: [], resumed: [] };
  const paused = await db.query<{ id: string }>(
    `UPDATE databases d SET desired_state = 'paused', status_reason = $1
       FROM ledger_wallets w
      WHERE w.owner_kind = 'account' AND w.owner_id = d.account_id::text AND w.currency = 'KRW' AND w.policy = 'prepaid'
        AND w.overdue_since < now() - $2 * interval '1 hour'
        AND d.desired_state = 'running' AND d.state = 'running' AND d.size <> 'dev'
      RETURNING d.id`,
    [OVERDUE_PAUSE_REASON, policy.graceHours],
  );
  const resumed = await db.query<{ id: string }>(
    `UPDATE databases d SET desired_state = 'running'
       FROM ledger_wallets w
      WHERE w.owner_kind = 'account' AND w.owner_id = d.account_id::text AND w.currency = 'KRW'
        AND w.overdue_since IS NULL AND d.status_reason = $1 AND d.desired_state = 'paused'
      RETURNING d.id`,
    [OVERDUE_PAUSE_REASON],
  );
  // the reconciler would get there too; queueing now makes it prompt
  for (const r of paused.rows) await enqueueSystem(db, queue, r.id, "stop");
  for (const r of resumed.rows) await enqueueSystem(db, queue, r.id, "start");
  return { paused: paused.rows.map((r) => r.id), resumed: resumed.rows.map((r) => r.id) };
}
