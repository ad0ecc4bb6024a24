import { Type } from "@sinclair/typebox";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import type { Route } from "../http/route.js";
import { resourceRoutes } from "../http/resource-routes.js";
import { drainView, type DrainService } from "./service.js";

const Name = Type.String({ minLength: 1, maxLength: 100 });
const Destination = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    "`https://…` (batched NDJSON, POSTed), `syslog+tls://host:port` (RFC 5424 over TLS, default port 6514) or `syslog://host:port` (over TCP, default 514); public addresses only",
});
const Headers = Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Type.String({ maxLength: 4096 }), {
  maxProperties: 10,
  description:
    "HTTP headers sent with each batch to an https destination (e.g. Authorization); sealed at rest and shown only as fingerprints. Replaces every header when given.",
});

const Drain = Type.Object({
  id: Type.String(),
  name: Type.String(),
  destination: Type.String(),
  headers: Type.Record(Type.String(), Type.Object({ fingerprint: Type.String() }), {
    description: "the header names with their values' fingerprints (HMAC-SHA256 under a platform key)",
  }),
  source: Type.String({ description: "pods: the pods' output; edge: the edge's access lines" }),
  app: Nullable(
    Type.Object(
      { kind: Type.String({ description: "pod, group or site" }), id: Type.String() },
      { description: "the one app shipped; null: every app of the owner" },
    ),
  ),
  enabled: Type.Boolean(),
  state: Type.Object({
    status: Type.String({ description: "waiting (nothing shipped yet), delivering, failing (retrying) or disabled" }),
    delivered_count: Type.Integer({ description: "lines the destination took" }),
    dropped_count: Type.Integer({
      description: "lines never shipped: older than the lag bound when their turn came, or beyond the edge's buffer",
    }),
    failed_attempts: Type.Integer({ description: "batches the destination refused or did not take (each retried)" }),
    last_error: Nullable(Type.String()),
    last_error_at: Nullable(Timestamp),
    last_success_at: Nullable(Timestamp),
    next_attempt_at: Nullable(Timestamp),
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const ERRORS = ["not_found", "destination_forbidden", "invalid_request"] as const;

/** Log drains per owner: where the owner's pod logs or the edge's access lines are shipped, and how that goes. */
export function drainRoutes(svc: DrainService): Route[] {
  return resourceRoutes({
    name: "LogDrain",
    url: "/v1/log-drains",
    tags: ["log-drains"],
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
    scope: "drains",
    schema: Drain,
    view: drainView,
    service: svc,
    listItems: true,
    create: {
      summary:
        "Ship the caller's pod logs (source pods: every pod, or one pod or group by `app`) or the edge's access lines (source edge: every app, or one pod, group or static site) to an https NDJSON or syslog destination (201).",
      summaryKo: "로그 드레인을 만듭니다(파드 로그 또는 엣지 접근 로그를 HTTPS/syslog로 전송).",
      errors: [...ERRORS],
      body: Body({
        name: Name,
        destination: Destination,
        headers: Type.Optional(Headers),
        source: Type.Optional(Type.Union([Type.Literal("pods"), Type.Literal("edge")], { default: "pods" })),
        app: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100, description: "id or slug" }))),
      }),
    },
    list: {
      summary: "The caller's log drains with their delivered, dropped and failed counts.",
      summaryKo: "로그 드레인 목록.",
    },
    get: {
      summary: "One log drain and its state: delivered, dropped, failed attempts, last error, last success.",
      summaryKo: "로그 드레인 하나와 상태.",
    },
    update: {
      summary:
        "Rename it, move it to another destination, replace its headers, or disable and enable it (a new destination or enabling clears the back-off).",
      summaryKo: "로그 드레인을 바꿉니다.",
      errors: [...ERRORS],
      body: Body({
        name: Type.Optional(Name),
        destination: Type.Optional(Destination),
        headers: Type.Optional(Headers),
        enabled: Type.Optional(Type.Boolean()),
      }),
    },
    remove: {
      summary: "Delete the log drain; nothing more is shipped.",
      summaryKo: "로그 드레인을 지웁니다.",
      status: 200,
    },
  });
}
