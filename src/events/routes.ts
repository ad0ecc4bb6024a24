import { Type } from "@sinclair/typebox";
import { callerOf } from "../auth/principal.js";
import { Nullable, Timestamp } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import type { Db } from "../store/db.js";
import { EVENT_TYPES } from "./catalog.js";
import { getEvent, listEvents } from "./service.js";
import { streamEvents } from "./stream.js";
import type { EventHub } from "./hub.js";

const tags = ["events"];

export const EventSchema = Type.Object({
  id: Type.String({ description: "unique; receivers deduplicate by it" }),
  type: Type.String({ description: "a dotted name from GET /v1/event-types" }),
  created_at: Timestamp,
  owner: Type.Object({ kind: Type.String(), id: Type.String() }),
  resource: Type.Object({ kind: Type.String(), id: Type.String() }),
  data: Type.Record(Type.String(), Type.Unknown()),
});

export const TypeFilterQuery = Type.String({
  maxLength: 2000,
  description: "comma-separated event types; `database.*` takes a prefix, `*` all",
});

const ChildId = Type.String({
  format: "uuid",
  description: "a partner: only this child's events (a partner sees its own and all its children's by default)",
});

/** The events list, one event, and the catalog of types. */
export function eventRoutes(db: Db, hub: EventHub, streamMaxMs: number): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/events/stream",
      operationId: "streamEvents",
      tags,
      summary:
        "The caller's events live as Server-Sent Events (id = event id, event = type, data = the event): after Last-Event-ID (header, or ?last_event_id=) when given, else from now; ?type= filters. The stream ends after a while; reconnect with Last-Event-ID.",
      summaryKo: "이벤트 실시간 스트림(Server-Sent Events, Last-Event-ID로 이어받기).",
      auth: { scope: "events:read" },
      streams: true,
      errors: ["bad_event_type", "bad_cursor", "not_found"],
      query: Type.Object(
        {
          type: Type.Optional(TypeFilterQuery),
          last_event_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          child_id: Type.Optional(ChildId),
        },
        { additionalProperties: false },
      ),
      headers: Type.Object({ "last-event-id": Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }),
      response: {
        200: {
          description:
            "text/event-stream: `id: <event id>`, `event: <type>`, `data: <event JSON>`; `: ping` every 15 s",
          content: { "text/event-stream": { schema: Type.String() } },
        },
      },
      handler: async (request, reply) =>
        streamEvents(db, hub, reply, {
          owner: callerOf(request).owner,
          type: request.query.type,
          lastEventId: request.headers["last-event-id"] ?? request.query.last_event_id,
          childId: request.query.child_id,
          maxMs: streamMaxMs,
        }),
    }),
    route({
      method: "GET",
      url: "/v1/events",
      operationId: "listEvents",
      tags,
      summary:
        "The caller's events, newest first: ?type=(types, `prefix.*`)&resource_kind=&resource_id=&limit=&cursor=(the last id of the previous page).",
      summaryKo: "이벤트 목록(최신순).",
      auth: { scope: "events:read" },
      errors: ["bad_event_type", "bad_cursor", "not_found"],
      query: Type.Object(
        {
          type: Type.Optional(TypeFilterQuery),
          resource_kind: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
          resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          child_id: Type.Optional(ChildId),
        },
        { additionalProperties: false },
      ),
      response: { 200: Type.Object({ items: Type.Array(EventSchema), next_cursor: Nullable(Type.String()) }) },
      handler: async (request) => listEvents(db, callerOf(request).owner, request.query),
    }),
    route({
      method: "GET",
      url: "/v1/events/:id",
      operationId: "getEvent",
      tags,
      summary: "One of the caller's events by id.",
      summaryKo: "이벤트 하나.",
      auth: { scope: "events:read" },
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
      response: { 200: EventSchema },
      handler: async (request) => getEvent(db, callerOf(request).owner, request.params.id),
    }),
    route({
      method: "GET",
      url: "/v1/event-types",
      operationId: "listEventTypes",
      tags,
      summary: "Every event type the platform emits, with what it means (for filters and webhook endpoints).",
      summaryKo: "이벤트 유형 목록.",
      auth: { token: true },
      response: {
        200: Type.Object({ items: Type.Array(Type.Object({ type: Type.String(), description: Type.String() })) }),
      },
      handler: async () => ({
        items: Object.entries(EVENT_TYPES).map(([type, description]) => ({ type, description })),
      }),
    }),
  ];
}
