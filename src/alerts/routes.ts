import { Type } from "@sinclair/typebox";
import { callerOf } from "../auth/principal.js";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import { resourceRoutes } from "../http/resource-routes.js";
import { COMPARISONS, METRIC_NAMES, METRICS, RESOURCE_KINDS } from "./figures.js";
import { firingView, ruleView, type AlertService } from "./service.js";

const tags = ["alerts"];
const NAME = "^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$";
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "id or name" }) });

const literals = <T extends string>(xs: readonly T[], description: string) =>
  Type.Union(
    xs.map((x) => Type.Literal(x)),
    { description },
  );
const Metric = literals(
  METRIC_NAMES,
  `what is watched, with its unit: ${METRIC_NAMES.map((m) => `${m} (${METRICS[m].unit})`).join("; ")}. Sites have the traffic ones only; databases only theirs (connections to archived_wal_age_seconds).`,
);
const Comparison = literals(COMPARISONS, "the condition: value <comparison> threshold");
const Resource = Nullable(
  Type.Object(
    {
      kind: literals(RESOURCE_KINDS, "what the rule watches"),
      id: Type.String({ minLength: 1, maxLength: 64, description: "its id or slug" }),
    },
    { additionalProperties: false, description: "one of the owner's resources; null or absent: all of them" },
  ),
);
const fields = {
  resource: Type.Optional(Resource),
  threshold: Type.Number({ minimum: 0, maximum: 1e15 }),
  window_minutes: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1440, description: "the value is taken over the last N minutes (default 5)" }),
  ),
  for_minutes: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1440,
      description:
        "how long the condition must hold before the rule fires, and be false before it resolves (default 5; resolving takes at least 1)",
    }),
  ),
  enabled: Type.Optional(Type.Boolean()),
};

const AlertRule = Type.Object({
  id: Type.String(),
  name: Type.String(),
  resource: Nullable(Type.Object({ kind: Type.String(), id: Type.String() })),
  metric: Type.String(),
  comparison: Type.String(),
  threshold: Type.Number(),
  window_minutes: Type.Integer(),
  for_minutes: Type.Integer(),
  enabled: Type.Boolean(),
  state: Type.String({ description: "ok, pending (the condition holds, not yet for_minutes) or firing" }),
  state_since: Timestamp,
  clearing_since: Nullable(
    Type.String({ format: "date-time", description: "firing: since when the condition has been false" }),
  ),
  last_value: Nullable(Type.Number({ description: "the value at the last evaluation (null: no data)" })),
  last_evaluated_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const Firing = Type.Object({
  id: Type.String(),
  fired_at: Timestamp,
  fired_value: Nullable(Type.Number()),
  resolved_at: Nullable(Timestamp),
  resolved_value: Nullable(Type.Number()),
  resolved_reason: Nullable(
    Type.String({ description: "condition cleared, rule changed, rule disabled or rule deleted" }),
  ),
});

// not_found: the resource a rule names (a pod, group, site or database) is not the owner's.
const ERRORS = ["bad_alert_metric", "slug_taken", "conflict", "invalid_request", "not_found"] as const;
/** a create and an update check the same fields, so they answer the same codes */
const checked = { errors: [...ERRORS], validationCodes: { "/name": "bad_slug" } };

/** Alert rules per owner, their state and their firings (README "Alerts"). */
export function alertRoutes(svc: AlertService): Route[] {
  return [
    ...resourceRoutes({
      name: "AlertRule",
      url: "/v1/alert-rules",
      tags,
      params: Params,
      scope: "alert-rules",
      instances: true,
      schema: AlertRule,
      view: ruleView,
      service: svc,
      listItems: true,
      create: {
        summary:
          "Create an alert rule (201): a metric of a pod, pod group or site (or of all the owner's), a comparison, a threshold, a window and how long it must hold. Transitions are the events alert.fired and alert.resolved and a mail.",
        summaryKo: "경보 규칙을 만듭니다.",
        ...checked,
        body: Body({
          name: Type.String({ pattern: NAME, minLength: 3, maxLength: 40 }),
          metric: Metric,
          comparison: Comparison,
          ...fields,
        }),
      },
      list: {
        summary: "The caller's alert rules with their states; instance-limited keys see theirs.",
        summaryKo: "경보 규칙 목록과 상태.",
      },
      get: {
        summary: "One alert rule by id or name: its state, since when, and the last value.",
        summaryKo: "경보 규칙 하나.",
      },
      update: {
        summary:
          "Change an alert rule. A changed condition or enabled starts over from ok; a firing alert then resolves (reason rule changed or rule disabled).",
        summaryKo: "경보 규칙을 바꿉니다.",
        ...checked,
        body: Body({
          name: Type.Optional(Type.String({ pattern: NAME, minLength: 3, maxLength: 40 })),
          metric: Type.Optional(Metric),
          comparison: Type.Optional(Comparison),
          ...fields,
          threshold: Type.Optional(fields.threshold),
        }),
      },
      remove: {
        summary: "Delete an alert rule and its history; a firing alert resolves (reason rule deleted).",
        summaryKo: "경보 규칙을 지웁니다.",
        // the document has always shown this empty answer without NoContent's description
        status: 204,
        schema: Type.Null(),
      },
    }),
    route({
      method: "GET",
      url: "/v1/alert-rules/:id/firings",
      operationId: "listAlertFirings",
      tags,
      summary:
        "The rule's firings, newest first (the newest 100 are kept): when it fired and resolved, and the values.",
      summaryKo: "경보 규칙의 발생 기록.",
      auth: { scope: "alert-rules:read", instance: { param: "id" } },
      params: Params,
      response: { 200: Type.Object({ items: Type.Array(Firing) }) },
      handler: async (request) => ({
        items: (await svc.firings(callerOf(request), request.params.id)).map(firingView),
      }),
    }),
  ];
}
