/**
 * What other areas use of events (issue 31). One call, inside the transaction of the change:
 *
 *   await recordEvent(q, { type: "database.running", owner, resource: { kind: "database", id }, data: { ... } });
 *
 * - `q`: the transaction (PoolClient) that commits the change, so the event exists exactly when the change does
 *   (an outbox row: webhooks, `GET /v1/events` and the live stream all read it from there).
 * - `type`: a dotted name from src/events/catalog.ts (`EVENT_TYPES`); a new kind of event adds a line there.
 * - `owner`: the resource's owner as the kernel spells it (`{kind: "account" | "org" | "partner_child", id}`,
 *   src/kernel/owner.ts): only that owner's tokens and webhook endpoints see it.
 * - `resource`: what the event is about, `{kind, id}`: kind singular as in the type (`database`, `pod`, `build`,
 *   `domain`, `budget`, `invoice`, `partner_child`, ...), id its id.
 * - `data`: a small JSON object of facts a receiver needs without calling back (name, state, reason, ...); never
 *   secrets. At most 16 KiB.
 * Resolves to the event's id. It throws on an unknown type or owner kind (a programming error, not user input).
 */
import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { isEventType, type EventType } from "./catalog.js";
import { insertEvent } from "./repo.js";

export type { EventType } from "./catalog.js";
export { EVENT_TYPES } from "./catalog.js";

export interface EventInput {
  type: EventType;
  owner: Owner;
  resource: { kind: string; id: string };
  data?: Record<string, unknown>;
}

const MAX_DATA_BYTES = 16 * 1024;
const OWNER_KINDS = new Set(["account", "org", "partner_child"]);

export async function recordEvent(q: Queryable, e: EventInput): Promise<string> {
  if (!isEventType(e.type)) throw new Error(`recordEvent: ${e.type} is not in src/events/catalog.ts`);
  if (!OWNER_KINDS.has(e.owner.kind)) throw new Error(`recordEvent: unknown owner kind ${e.owner.kind}`);
  const data = e.data ?? {};
  if (JSON.stringify(data).length > MAX_DATA_BYTES) throw new Error(`recordEvent: ${e.type} data exceeds 16 KiB`);
  return (await insertEvent(q, { type: e.type, owner: e.owner, resource: e.resource, data })).id;
}
