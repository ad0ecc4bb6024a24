import type pg from "pg";
import type { JobQueue } from "../jobs/queue.js";
import { recordEvent } from "../events/public.js";
import type { FiringRow, RuleRow } from "./repo.js";

export const NOTIFY_JOB = "alerts.notify";

export interface NoticeJob {
  to: string;
  subject: string;
  text: string;
}

const KIND_LABEL = { pod: "pod", pod_group: "pod group", site: "site", database: "database" } as const;
const subjectOf = (r: RuleRow) =>
  r.resource_kind ? `${KIND_LABEL[r.resource_kind]} ${r.resource_id}` : "all resources of the owner";
const fmt = (v: number | null) => (v === null ? "no value" : String(v));

/**
 * Tells a transition, inside the transaction that records it: the event (`alert.fired` / `alert.resolved`, so
 * webhook endpoints and the stream get it) and the mail as a queued job, so a crash after the commit still sends it
 * (at least once; the job retries a failing SMTP server).
 */
export async function tellTransition(
  tx: pg.PoolClient,
  jobs: JobQueue,
  rule: RuleRow,
  firing: FiringRow,
  what: "fired" | "resolved",
): Promise<void> {
  const condition = `${rule.metric} ${rule.comparison} ${rule.threshold} over ${rule.window_minutes} min`;
  await recordEvent(tx, {
    type: what === "fired" ? "alert.fired" : "alert.resolved",
    owner: { kind: rule.owner_kind, id: rule.owner_id },
    resource: { kind: "alert_rule", id: rule.id },
    data: {
      name: rule.name,
      firing_id: firing.id,
      resource: rule.resource_kind ? { kind: rule.resource_kind, id: rule.resource_id } : null,
      metric: rule.metric,
      comparison: rule.comparison,
      threshold: rule.threshold,
      window_minutes: rule.window_minutes,
      for_minutes: rule.for_minutes,
      value: what === "fired" ? firing.fired_value : firing.resolved_value,
      fired_at: firing.fired_at.toISOString(),
      ...(what === "resolved"
        ? { resolved_at: firing.resolved_at?.toISOString() ?? null, reason: firing.resolved_reason }
        : {}),
    },
  });
  const text =
    what === "fired"
      ? [
          `Your alert "${rule.name}" is firing: ${condition} held for ${rule.for_minutes} min on ${subjectOf(rule)}.`,
          `Value: ${fmt(firing.fired_value)} (since ${firing.fired_at.toISOString()})`,
        ]
      : [
          `Your alert "${rule.name}" resolved (${firing.resolved_reason}): ${condition} on ${subjectOf(rule)}.`,
          `Value: ${fmt(firing.resolved_value)}; it fired at ${firing.fired_at.toISOString()}.`,
        ];
  text.push(`Rule: GET /v1/alert-rules/${rule.id}`);
  const notice: NoticeJob = {
    to: rule.notify_email,
    subject: `Alert "${rule.name}" ${what === "fired" ? "firing" : "resolved"}`,
    text: text.join("\n"),
  };
  await jobs.sendIn(tx, NOTIFY_JOB, notice);
}
