import type { BuildRow, EventRow } from "./repo.js";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The public shape of a build (lists leave the logs out). */
export function buildView(b: BuildRow) {
  return {
    id: b.id,
    status: b.status,
    status_reason: b.status_reason,
    phase: b.phase,
    app: b.app_kind && b.app_id ? { kind: b.app_kind, id: b.app_id, slug: b.app_slug ?? "" } : null,
    dockerfile: b.dockerfile,
    context_path: b.context_path,
    host_id: b.host_id,
    upload_expires_at: b.upload_expires_at.toISOString(),
    uploaded_at: iso(b.uploaded_at),
    source_bytes: b.source_bytes === null ? null : Number(b.source_bytes),
    image: b.image,
    digest: b.digest,
    deployed_at: iso(b.deployed_at),
    deploy_error: b.deploy_error,
    build_args: b.build_args ?? {},
    build_secrets: b.build_secrets_meta ?? {},
    cancel:
      b.status === "cancelled"
        ? { reason: b.cancel_reason, phase: b.cancel_phase, detail: b.cancel_detail ?? null }
        : null,
    created_at: b.created_at.toISOString(),
    queued_at: iso(b.queued_at),
    started_at: iso(b.started_at),
    finished_at: iso(b.finished_at),
    updated_at: b.updated_at.toISOString(),
  };
}

export function eventView(e: EventRow) {
  return {
    id: Number(e.id),
    phase: e.phase,
    level: e.level,
    message: e.message,
    detail: e.detail ?? null,
    created_at: e.created_at.toISOString(),
  };
}

/** One build with its log (the last BUILD_LOG_BYTES characters) and the client's events. */
export function buildDetailView(b: BuildRow, events: EventRow[]) {
  return { ...buildView(b), logs: b.logs, logs_dropped: Number(b.log_dropped), events: events.map(eventView) };
}
