import { fileURLToPath } from "node:url";
import { defineArea, everyMinute, rowLookup } from "../kernel/area.js";
import { ALERTS_ERROR_CODES } from "./errors.js";
import { ALERTS_SCOPES } from "./scopes.js";
import { alertRoutes } from "./routes.js";
import { alertService, type AlertService } from "./service.js";
import { createEvaluator, EVALUATE_JOB, type Evaluator } from "./evaluator.js";
import { NOTIFY_JOB, type NoticeJob } from "./notify.js";
import { findRule } from "./repo.js";

export interface AlertsState {
  svc: AlertService;
  evaluator: Evaluator;
}

/** Alert rules on the per-minute metrics (issue 31): src/alerts/README.md. */
export const alertsArea = defineArea<AlertsState>({
  name: "alerts",
  errors: ALERTS_ERROR_CODES,
  scopes: ALERTS_SCOPES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [{ name: "alerts", description: "Threshold alert rules on the caller's metrics, their states and firings." }],
  setup: (p) => ({
    svc: alertService({ db: p.db, kernel: p.kernel, jobs: p.jobs }),
    evaluator: createEvaluator({ db: p.db, jobs: p.jobs, log: p.log }),
  }),
  routes: (_app, _p, s) => alertRoutes(s.svc),
  jobs: (p, s) => [
    everyMinute(EVALUATE_JOB, () => s.evaluator.run(), { expireInSeconds: 120 }),
    {
      name: NOTIFY_JOB,
      // a failing SMTP server is retried by the queue; the notice was queued with the transition it tells
      retryLimit: 5,
      handler: async (notice: NoticeJob) => p.kernel.mailer.send(notice),
    },
  ],
  // a member changes the rules they made; admins and the owner all (kernel.assertMayChange)
  instances: (p) =>
    rowLookup(
      "alert-rules",
      (owner, ref) => findRule(p.db, owner, ref),
      (rule) => rule.name,
    ),
});
