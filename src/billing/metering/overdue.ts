import type { Db } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import * as repo from "./repo.js";

export interface OverduePolicy {
  /** keep: paid resources go on running while overdue (default); pause: they are stopped after the grace period */
  action: "keep" | "pause";
  graceHours: number;
}

export const OVERDUE_PAUSE_REASON =
  "Paused because the account is overdue; it starts again once the balance is topped up.";

/**
 * What a balance running out does to running resources. New paid creation is blocked either way
 * (admission.ts). With action "pause", the paid resources of owners whose prepaid wallet is overdue past
 * the grace period are paused in every area (kernel.pauseOwner), and resumed by this same job once the
 * wallet is settled. The owners billing paused are recorded (before pausing), so resume touches only those.
 */
export async function enforceOverdue(
  p: { db: Db; kernel: Pick<Kernel, "pauseOwner" | "resumeOwner"> },
  policy: OverduePolicy,
): Promise<{ paused: string[]; resumed: string[] }> {
  if (policy.action === "keep") return { paused: [], resumed: [] };
  const paused: string[] = [];
  const resumed: string[] = [];
  for (const owner of await repo.overdueOwners(p.db, policy.graceHours)) {
    await repo.recordOverduePause(p.db, owner);
    paused.push(...(await p.kernel.pauseOwner(p.db, owner, OVERDUE_PAUSE_REASON)));
  }
  for (const owner of await repo.settledPausedOwners(p.db)) {
    resumed.push(...(await p.kernel.resumeOwner(p.db, owner, OVERDUE_PAUSE_REASON)));
    await repo.forgetOverduePause(p.db, owner);
  }
  return { paused, resumed };
}
