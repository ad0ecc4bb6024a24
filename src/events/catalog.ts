/**
 * Every event type the platform emits, in one catalog: dotted names, `<resource>.<what happened>`, with a line for
 * the API's reference and the filter lists. An area emitting a new kind of event adds one line here.
 */
export const EVENT_TYPES = {
  "database.running": "A database became running (created, started or restored).",
  "database.failed": "A database failed (provisioning, start or restore); data.reason says why.",
  "database.backup_failed": "A backup of a database failed; data.reason says why.",
  "database.scaled_to_zero": "A dev database was stopped after its idle time without connections.",
  "database.woken": "An idle-stopped dev database was started again by a connection.",
  "pod.rollout.succeeded": "A pod's or group's new generation is serving.",
  "pod.rollout.rolled_back": "A rollout was abandoned; the previous generation keeps serving.",
  "pod.crash_loop": "A pod kept crashing and stopped being restarted (failed).",
  "build.succeeded": "A build finished and pushed its image.",
  "build.failed": "A build failed or was cancelled; data.reason says why.",
  "domain.verified": "A custom domain's DNS records were verified.",
  "domain.certificate_failed": "A custom domain's certificate could not be issued.",
  "budget.warn": "Spending reached a budget's warning threshold.",
  "budget.exceeded": "Spending exceeded a budget.",
  "invoice.finalized": "An organization's card invoice for a period was finalized (data.total_krw, data.status).",
  "partner.child.created": "A partner created a child account.",
  "partner.child.deleted": "A partner deleted a child account.",
  "partner.settlement.completed":
    "A 5-minute settlement window moved the partner's children's postpaid usage to the partner (data.amount_krw).",
  "partner.settlement.finalized": "A partner's monthly settlement (invoice) was finalized.",
  "deploy.succeeded":
    "A deploy finished: a static site's deployment went live (finalize or rollback; data.slug, data.deployment_id, data.rollback), or a pod's or group's rollout is serving (as pod.rollout.succeeded, with data.resource_kind).",
  "deploy.failed":
    "A deploy failed: a pod's or group's rollout was rolled back (as pod.rollout.rolled_back, with data.resource_kind and data.reason).",
  "branch.ready": "A database branch is ready.",
  "branch.failed": "A database branch failed.",
  "preview.ready": "A preview environment is serving.",
  "preview.failed": "A preview environment failed.",
  "preview.deleted": "A preview environment was removed.",
  "app.scaled_to_zero": "An app was stopped for want of traffic.",
  "app.woken": "An app was started again by a request.",
  "alert.fired": "An alert rule's condition held long enough: it fired.",
  "alert.resolved": "A firing alert's condition no longer holds.",
  "webhook_endpoint.disabled": "A webhook endpoint was disabled after failing for days.",
} as const;

export type EventType = keyof typeof EVENT_TYPES;

export const isEventType = (t: string): t is EventType => Object.hasOwn(EVENT_TYPES, t);

/** A filter entry: an exact type, `*` (all), or a prefix ending in `.*` (`database.*`). */
export function filterMatches(filters: readonly string[], type: string): boolean {
  return filters.some((f) => f === "*" || f === type || (f.endsWith(".*") && type.startsWith(f.slice(0, -1))));
}

/** Whether a filter entry names something in the catalog (an exact type, `*`, or a prefix of some type). */
export const validFilter = (f: string): boolean =>
  f === "*" ||
  isEventType(f) ||
  (f.endsWith(".*") && Object.keys(EVENT_TYPES).some((t) => t.startsWith(f.slice(0, -1))));
