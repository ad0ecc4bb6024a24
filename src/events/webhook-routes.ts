import { Type } from "@sinclair/typebox";
import { callerOf } from "../auth/principal.js";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import { resourceRoutes } from "../http/resource-routes.js";
import { endpointView, type WebhookService } from "./webhook-service.js";

const tags = ["webhooks"];
const read = { scope: "webhooks:read" } as const;
const write = { scope: "webhooks:write" } as const;
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const DeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  delivery_id: Type.String({ minLength: 1, maxLength: 64 }),
});
const Url = Type.String({ minLength: 1, maxLength: 2048, description: "a public http(s) URL" });
const Types = Type.Array(Type.String({ minLength: 1, maxLength: 80 }), {
  minItems: 1,
  maxItems: 100,
  description: "event types to send: exact (`build.failed`), a prefix (`database.*`) or `*` for all",
});
const Description = Nullable(Type.String({ maxLength: 500 }));
const ChildIds = Nullable(
  Type.Array(Type.String({ format: "uuid" }), {
    maxItems: 1000,
    description:
      "a partner's endpoint receives its children's events too: null for every child (the default), a list for those children only, [] for none",
  }),
);

const endpointFields = {
  id: Type.String(),
  url: Type.String(),
  description: Nullable(Type.String()),
  event_types: Type.Array(Type.String()),
  child_ids: Nullable(Type.Array(Type.String())),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String({ description: "why the platform disabled it (days of failed deliveries)" })),
  failing_since: Nullable(Timestamp),
  previous_secret_expires_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
};
const Endpoint = Type.Object(endpointFields);
const WithSecret = Type.Object({
  ...endpointFields,
  secret: Type.String({ description: "whsec_…, shown only in this answer" }),
});
const deliveryFields = {
  id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  state: Type.String({ description: "pending (retries scheduled), succeeded or failed (gave up)" }),
  attempts: Type.Integer(),
  next_attempt_at: Nullable(Timestamp),
  last_status: Nullable(Type.Integer()),
  last_latency_ms: Nullable(Type.Integer()),
  last_answer: Nullable(Type.String({ description: "the first 1 KiB of the answer" })),
  last_error: Nullable(Type.String()),
  last_attempt_at: Nullable(Timestamp),
  created_at: Timestamp,
};
const Delivery = Type.Object(deliveryFields);
const Attempt = Type.Object({
  at: Timestamp,
  manual: Type.Boolean(),
  status: Nullable(Type.Integer()),
  latency_ms: Type.Integer(),
  answer_excerpt: Nullable(Type.String()),
  error: Nullable(Type.String()),
});

const DeliveryWithAttempts = Type.Object({ ...deliveryFields, attempts: Type.Array(Attempt) });

const ERRORS = ["not_found", "bad_event_type", "destination_forbidden", "invalid_request"] as const;

/** Webhook endpoints per owner, their secrets, and their delivery logs. */
export function webhookRoutes(svc: WebhookService): Route[] {
  return [
    ...resourceRoutes({
      name: "WebhookEndpoint",
      url: "/v1/webhook-endpoints",
      tags,
      params: Params,
      scope: "webhooks",
      schema: Endpoint,
      view: endpointView,
      service: svc,
      listItems: true,
      create: {
        summary:
          "Register a webhook endpoint for the caller's events of the given types (201); its signing secret is in this answer only.",
        summaryKo: "웹훅 엔드포인트를 등록합니다(서명 비밀은 이 응답에만).",
        errors: [...ERRORS],
        body: Body({
          url: Url,
          event_types: Types,
          description: Type.Optional(Description),
          child_ids: Type.Optional(ChildIds),
        }),
        answer: { schema: WithSecret, view: ({ row, secret }) => ({ ...endpointView(row), secret }) },
      },
      list: { summary: "The caller's webhook endpoints (never their secrets).", summaryKo: "웹훅 엔드포인트 목록." },
      get: { summary: "One webhook endpoint.", summaryKo: "웹훅 엔드포인트 하나." },
      update: {
        summary:
          "Change the URL, event types or description, or disable and enable it (enabling clears a failure streak).",
        summaryKo: "웹훅 엔드포인트를 바꿉니다.",
        errors: [...ERRORS],
        body: Body({
          url: Type.Optional(Url),
          event_types: Type.Optional(Types),
          description: Type.Optional(Description),
          enabled: Type.Optional(Type.Boolean()),
          child_ids: Type.Optional(ChildIds),
        }),
      },
      remove: {
        summary: "Delete the endpoint; deliveries still waiting are dropped.",
        summaryKo: "웹훅 엔드포인트를 지웁니다.",
        status: 200,
      },
    }),
    route({
      method: "POST",
      url: "/v1/webhook-endpoints/:id/roll-secret",
      operationId: "rollWebhookEndpointSecret",
      tags,
      summary:
        "A new signing secret (in this answer only); the old one keeps signing beside it for previous_valid_seconds (default 0: stops now, at most 7 days).",
      summaryKo: "웹훅 서명 비밀을 새로 만듭니다.",
      auth: write,
      params: Params,
      body: Type.Optional(
        Body({ previous_valid_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 86_400 })) }),
      ),
      response: { 200: WithSecret },
      handler: async (request) => {
        const keep = request.body?.previous_valid_seconds ?? 0;
        const { row, secret } = await svc.rollSecret(callerOf(request), request.params.id, keep);
        return { ...endpointView(row), secret };
      },
    }),
    route({
      method: "GET",
      url: "/v1/webhook-endpoints/:id/deliveries",
      operationId: "listWebhookDeliveries",
      tags,
      summary: "The endpoint's delivery log, newest first: state, attempts, last status, latency and answer excerpt.",
      summaryKo: "웹훅 전송 기록.",
      auth: read,
      errors: ["bad_cursor"],
      params: Params,
      query: Type.Object(
        {
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        },
        { additionalProperties: false },
      ),
      response: { 200: Type.Object({ items: Type.Array(Delivery), next_cursor: Nullable(Type.String()) }) },
      handler: async (request) =>
        svc.deliveries(callerOf(request), request.params.id, request.query.limit ?? 50, request.query.cursor),
    }),
    route({
      method: "GET",
      url: "/v1/webhook-endpoints/:id/deliveries/:delivery_id",
      operationId: "getWebhookDelivery",
      tags,
      summary: "One delivery with every attempt (time, status, latency, answer excerpt, error).",
      summaryKo: "웹훅 전송 하나와 시도 기록.",
      auth: read,
      params: DeliveryParams,
      response: { 200: DeliveryWithAttempts },
      handler: async (request) => svc.delivery(callerOf(request), request.params.id, request.params.delivery_id),
    }),
    route({
      method: "POST",
      url: "/v1/webhook-endpoints/:id/deliveries/:delivery_id/redeliver",
      operationId: "redeliverWebhookDelivery",
      tags,
      summary: "Send the delivery's event again now (202), whatever its state; the attempt joins its log.",
      summaryKo: "웹훅 이벤트를 다시 보냅니다.",
      auth: write,
      params: DeliveryParams,
      response: { 202: DeliveryWithAttempts },
      handler: async (request, reply) =>
        reply.code(202).send(await svc.redeliver(callerOf(request), request.params.id, request.params.delivery_id)),
    }),
  ];
}
