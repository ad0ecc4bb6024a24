import type { Db } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { ApiError } from "../http/errors.js";
import { isUuid } from "../store/db.js";
import { validFilter } from "./catalog.js";
import * as repo from "./repo.js";

/** An event as the API, the stream and webhooks show it. */
export const eventView = (r: repo.EventRow) => ({
  id: r.id,
  type: r.type,
  created_at: r.created_at.toISOString(),
  owner: { kind: r.owner_kind, id: r.owner_id },
  resource: { kind: r.resource_kind, id: r.resource_id },
  data: r.data,
});
export type EventView = ReturnType<typeof eventView>;

/** `type=database.running,build.*`: exact types, `prefix.*` or `*`; each must name something in the catalog. */
export function parseTypes(raw: string | undefined): string[] | null {
  if (raw === undefined || raw === "") return null;
  const types = raw
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const bad = types.find((t) => !validFilter(t));
  if (bad) throw new ApiError("bad_event_type", `${JSON.stringify(bad)} is not an event type (GET /v1/event-types).`);
  return types;
}

/** Resolves an event id handed out earlier (cursor, Last-Event-ID) to its position; only the owner's. */
export async function positionOf(db: Db, owner: Owner, id: string): Promise<repo.Position> {
  const pos = isUuid(id) ? await repo.positionOf(db, owner, id) : null;
  if (!pos) throw new ApiError("bad_cursor", `${JSON.stringify(id.slice(0, 80))} is not one of the caller's events.`);
  return pos;
}

export interface ListQuery {
  type?: string;
  resource_kind?: string;
  resource_id?: string;
  limit?: number;
  cursor?: string;
}

/** Newest first; the cursor is the id of the last event of the previous page. */
export async function listEvents(db: Db, owner: Owner, q: ListQuery) {
  const limit = q.limit ?? 50;
  const before = q.cursor ? await positionOf(db, owner, q.cursor) : null;
  const filter = { types: parseTypes(q.type), resourceKind: q.resource_kind, resourceId: q.resource_id };
  const rows = await repo.listEvents(db, owner, filter, before, limit + 1);
  const page = rows.slice(0, limit);
  return { items: page.map(eventView), next_cursor: rows.length > limit ? page[page.length - 1].id : null };
}

export async function getEvent(db: Db, owner: Owner, id: string): Promise<EventView> {
  const pos = isUuid(id) ? await repo.positionOf(db, owner, id) : null;
  const row = pos && (await repo.eventBySeq(db, pos.seq));
  if (!row) throw new ApiError("not_found", "No such event.");
  return eventView(row);
}
