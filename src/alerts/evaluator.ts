import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import { inTransaction } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import { holds, readFigure, type Metric } from "./figures.js";
import { step } from "./transition.js";
import * as repo from "./repo.js";
import { NOTIFY_JOB, tellTransition } from "./notify.js";

export const EVALUATE_JOB = "alerts.evaluate";

export interface Evaluator {
  /** Evaluates every enabled rule at `now` (epoch ms); returns how many transitions were told. */
  run(now?: number): Promise<number>;
}

/**
 * One pass over the enabled rules. Each rule is read, compared and moved in a transaction of its own with its row
 * locked (a second evaluator skips it), so the state, the firing row, the event and the queued mail commit together
 * or not at all: a kill at any point leaves the rule as it was, and the next pass evaluates it again.
 */
export function createEvaluator(deps: { db: Db; jobs: JobQueue; log: FastifyBaseLogger }): Evaluator {
  return {
    async run(now = Date.now()) {
      let told = 0;
      for (const id of await repo.enabledRuleIds(deps.db)) {
        try {
          const t = await inTransaction(deps.db, async (tx) => {
            const rule = await repo.lockRule(tx, id);
            if (!rule) return false;
            const value = await readFigure(
              tx,
              {
                owner: { kind: rule.owner_kind, id: rule.owner_id },
                resourceKind: rule.resource_kind,
                resourceId: rule.resource_id,
                metric: rule.metric as Metric,
                windowMinutes: rule.window_minutes,
              },
              now,
            );
            const next = step(
              {
                state: rule.state,
                stateSince: rule.state_since.getTime(),
                clearingSince: rule.clearing_since?.getTime() ?? null,
                forMinutes: rule.for_minutes,
              },
              holds(value, rule.comparison, rule.threshold),
              now,
            );
            const saved = await repo.saveEvaluation(tx, rule.id, {
              state: next.state,
              state_since: new Date(next.stateSince),
              clearing_since: next.clearingSince === null ? null : new Date(next.clearingSince),
              last_value: value,
              at: new Date(now),
            });
            if (next.notify === "fired") {
              const firing = await repo.insertFiring(tx, {
                id: randomUUID(),
                rule_id: rule.id,
                fired_at: new Date(now),
                fired_value: value,
              });
              await tellTransition(tx, deps.jobs, saved, firing, "fired");
            } else if (next.notify === "resolved") {
              const firing = await repo.resolveFiring(tx, rule.id, {
                at: new Date(now),
                value,
                reason: "condition cleared",
              });
              if (firing) await tellTransition(tx, deps.jobs, saved, firing, "resolved");
            }
            return next.notify !== null;
          });
          if (t) told++;
        } catch (err) {
          deps.log.warn({ err, rule: id }, "alert rule not evaluated; the next pass retries");
        }
      }
      if (told) deps.jobs.wakeLocal(NOTIFY_JOB);
      return told;
    },
  };
}
