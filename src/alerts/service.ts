import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Db } from "../store/db.js";
import { isUniqueViolation } from "../store/db.js";
import type { Principal, InstanceFilter } from "../auth/principal.js";
import type { Kernel } from "../kernel/kernel.js";
import type { JobQueue } from "../jobs/queue.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError, found } from "../http/errors.js";
import { metricFits, METRICS, type Comparison, type Metric, type ResourceKind } from "./figures.js";
import * as repo from "./repo.js";
import { NOTIFY_JOB, tellTransition } from "./notify.js";

export interface RuleInput {
  name?: string;
  resource?: { kind: ResourceKind; id: string } | null;
  metric?: Metric;
  comparison?: Comparison;
  threshold?: number;
  window_minutes?: number;
  for_minutes?: number;
  enabled?: boolean;
}

export const DEFAULT_WINDOW_MINUTES = 5;
export const DEFAULT_FOR_MINUTES = 5;
/** Stripe-like bound on one owner's rules: each is read every minute. */
export const MAX_RULES = 100;

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const ruleView = (r: repo.RuleRow) => ({
  id: r.id,
  name: r.name,
  resource: r.resource_kind ? { kind: r.resource_kind, id: r.resource_id! } : null,
  metric: r.metric,
  comparison: r.comparison,
  threshold: r.threshold,
  window_minutes: r.window_minutes,
  for_minutes: r.for_minutes,
  enabled: r.enabled,
  state: r.state,
  state_since: r.state_since.toISOString(),
  clearing_since: iso(r.clearing_since),
  last_value: r.last_value,
  last_evaluated_at: iso(r.last_evaluated_at),
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export const firingView = (f: repo.FiringRow) => ({
  id: f.id,
  fired_at: f.fired_at.toISOString(),
  fired_value: f.fired_value,
  resolved_at: iso(f.resolved_at),
  resolved_value: f.resolved_value,
  resolved_reason: f.resolved_reason,
});

const LOOKUP = { pod: "pods", pod_group: "pods", site: "static", database: "databases" } as const;
const LABEL = { pod: "pod", pod_group: "pod group", site: "static site", database: "database" } as const;
/** the instance lookup's kind for pods and groups (sites and databases have none) */
const FOUND_KIND = { pod: "pod", pod_group: "group", site: undefined, database: undefined } as const;

export function alertService(d: { db: Db; kernel: Kernel; jobs: JobQueue }) {
  /** The resource a rule names, as an id of the caller's owner; 404 naming it otherwise. */
  async function resolveResource(p: Principal, r: { kind: ResourceKind; id: string }): Promise<string> {
    const instance = await d.kernel.findInstance(LOOKUP[r.kind], p.owner, r.id);
    const want = FOUND_KIND[r.kind];
    if (!instance || (want !== undefined && instance.kind !== undefined && instance.kind !== want))
      throw new ApiError("not_found", `No ${LABEL[r.kind]} "${r.id}" for this owner (resource.id).`);
    return instance.id;
  }

  function checkCondition(f: Pick<repo.RuleFields, "metric" | "threshold" | "resource_kind">): void {
    if (!metricFits(f.metric as Metric, f.resource_kind))
      throw new ApiError(
        "bad_alert_metric",
        `${f.metric} has no series for ${f.resource_kind ? `a ${LABEL[f.resource_kind]}` : "the whole owner (database metrics name one database)"}: ${Object.keys(
          METRICS,
        )
          .filter((m) => metricFits(m as Metric, f.resource_kind))
          .join(", ")} do.`,
      );
    if (f.metric === "error_rate_percent" && f.threshold > 100)
      throw new ApiError("invalid_request", "threshold: error_rate_percent is a percent (0 to 100).");
    if (f.metric === "cache_hit_ratio" && f.threshold > 1)
      throw new ApiError("invalid_request", "threshold: cache_hit_ratio is a ratio (0 to 1).");
  }

  /** Ends an open firing because the rule changed or went, told like any resolution. */
  async function resolveBecause(tx: pg.PoolClient, rule: repo.RuleRow, reason: string) {
    if (rule.state !== "firing") return false;
    const firing = await repo.resolveFiring(tx, rule.id, { at: new Date(), value: rule.last_value, reason });
    if (!firing) return false;
    await tellTransition(tx, d.jobs, rule, firing, "resolved");
    return true;
  }

  async function get(p: Principal, ref: string): Promise<repo.RuleRow> {
    return found(await repo.findRule(d.db, p.owner, ref), "alert rule");
  }

  const named = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err, "alert_rules_name"))
        throw new ApiError("slug_taken", `An alert rule named "${name}" exists already.`);
      throw err;
    }
  };

  return {
    async create(
      p: Principal,
      f: Required<Pick<RuleInput, "name" | "metric" | "comparison" | "threshold">> & RuleInput,
    ) {
      // the condition is checked before the reference is looked up: a bad metric is a 400 whatever the resource
      checkCondition({ metric: f.metric, threshold: f.threshold, resource_kind: f.resource?.kind ?? null });
      const fields: repo.RuleFields = {
        name: f.name,
        resource_kind: f.resource?.kind ?? null,
        resource_id: f.resource ? await resolveResource(p, f.resource) : null,
        metric: f.metric,
        comparison: f.comparison,
        threshold: f.threshold,
        window_minutes: f.window_minutes ?? DEFAULT_WINDOW_MINUTES,
        for_minutes: f.for_minutes ?? DEFAULT_FOR_MINUTES,
        enabled: f.enabled ?? true,
      };
      return named(f.name, () =>
        auditedTransaction(d.db, p, async (tx) => {
          if ((await repo.listRules(tx, p.owner, null)).length >= MAX_RULES)
            throw new ApiError("conflict", `An owner has at most ${MAX_RULES} alert rules; delete one first.`);
          return repo.insertRule(tx, {
            ...fields,
            id: randomUUID(),
            owner: p.owner,
            account_id: p.accountId,
            notify_email: p.account.email,
          });
        }),
      );
    },

    list: (p: Principal, filter: InstanceFilter) => repo.listRules(d.db, p.owner, filter),

    get,

    async firings(p: Principal, ref: string) {
      const rule = await get(p, ref);
      return repo.listFirings(d.db, rule.id, repo.FIRINGS_KEPT);
    },

    async update(p: Principal, ref: string, f: RuleInput) {
      const resourceId = f.resource ? await resolveResource(p, f.resource) : f.resource;
      let told = false;
      const row = await named(f.name ?? "", () =>
        auditedTransaction(d.db, p, async (tx) => {
          const cur = found(await repo.findRule(tx, p.owner, ref, { forUpdate: true }), "alert rule");
          const next: repo.RuleFields = {
            name: f.name ?? cur.name,
            resource_kind: f.resource === undefined ? cur.resource_kind : (f.resource?.kind ?? null),
            resource_id: resourceId === undefined ? cur.resource_id : resourceId,
            metric: f.metric ?? cur.metric,
            comparison: f.comparison ?? cur.comparison,
            threshold: f.threshold ?? cur.threshold,
            window_minutes: f.window_minutes ?? cur.window_minutes,
            for_minutes: f.for_minutes ?? cur.for_minutes,
            enabled: f.enabled ?? cur.enabled,
          };
          checkCondition(next);
          const conditionChanged = (
            [
              "resource_kind",
              "resource_id",
              "metric",
              "comparison",
              "threshold",
              "window_minutes",
              "for_minutes",
            ] as const
          ).some((k) => next[k] !== cur[k]);
          const reset = conditionChanged || next.enabled !== cur.enabled;
          if (reset) told = await resolveBecause(tx, cur, next.enabled ? "rule changed" : "rule disabled");
          return repo.updateRule(tx, cur.id, next, reset);
        }),
      );
      if (told) d.jobs.wakeLocal(NOTIFY_JOB);
      return row;
    },

    async remove(p: Principal, ref: string) {
      let told = false;
      await auditedTransaction(d.db, p, async (tx) => {
        const cur = found(await repo.findRule(tx, p.owner, ref, { forUpdate: true }), "alert rule");
        told = await resolveBecause(tx, cur, "rule deleted");
        await repo.deleteRule(tx, cur.id);
      });
      if (told) d.jobs.wakeLocal(NOTIFY_JOB);
    },
  };
}

export type AlertService = ReturnType<typeof alertService>;
