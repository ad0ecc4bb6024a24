import type { Db } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { ApiError } from "../http/errors.js";
import { isUuid } from "../store/db.js";
import { childrenOf, partnerByAccount } from "../partner/public.js";
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

/**
 * Whose events a caller sees: its owner's; a partner account also its live children's (a partner platform reacts
 * to what happens to its customers), all of them or, with `childId`, one (404 when it is not the partner's child).
 * Read again for every page and every wake of a stream, so a child created meanwhile is seen at once.
 */
export async function visibleOwners(db: Db, owner: Owner, childId?: string): Promise<Owner[]> {
  const partner = owner.kind === "account" ? await partnerByAccount(db, owner.id) : null;
  const children = partner ? await childrenOf(db, partner.account_id) : [];
  if (childId !== undefined) {
    if (!children.includes(childId)) throw new ApiError("not_found", "No such child user of the caller's.");
    return [{ kind: "partner_child", id: childId }];
  }
  return [owner, ...children.map((id) => ({ kind: "partner_child" as const, id }))];
}

/** Resolves an event id handed out earlier (cursor, Last-Event-ID) to its position; only the visible owners'. */
export async function positionOf(db: Db, owners: readonly Owner[], id: string): Promise<repo.Position> {
  const pos = isUuid(id) ? await repo.positionOf(db, owners, id) : null;
  if (!pos) throw new ApiError("bad_cursor", `${JSON.stringify(id.slice(0, 80))} is not one of the caller's events.`);
  return pos;
}

export interface ListQuery {
  type?: string;
  resource_kind?: string;
  resource_id?: string;
  limit?: number;
  cursor?: string;
  child_id?: string;
}

/** Newest first; the cursor is the id of the last event of the previous page. */
export async function listEvents(db: Db, owner: Owner, q: ListQuery) {
  const limit = q.limit ?? 50;
  const owners = await visibleOwners(db, owner, q.child_id);
  const before = q.cursor ? await positionOf(db, owners, q.cursor) : null;
  const filter = { types: parseTypes(q.type), resourceKind: q.resource_kind, resourceId: q.resource_id };
  const rows = await repo.listEvents(db, owners, filter, before, limit + 1);
  const page = rows.slice(0, limit);
  return { items: page.map(eventView), next_cursor: rows.length > limit ? page[page.length - 1].id : null };
}

export async function getEvent(db: Db, owner: Owner, id: string): Promise<EventView> {
  const pos = isUuid(id) ? await repo.positionOf(db, await visibleOwners(db, owner), id) : null;
  const row = pos && (await repo.eventBySeq(db, pos.seq));
  if (!row) throw new ApiError("not_found", "No such event.");
  return eventView(row);
}
