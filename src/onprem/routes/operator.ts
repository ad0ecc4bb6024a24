import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { Body } from "../../http/schemas.js";
import type { AccessService } from "../access-service.js";
import { VERSION } from "../config.js";
import type { ReleasesService } from "../releases-service.js";
import { IdParams, Inquiry, inquiryView, operator, Release, releaseView } from "./schemas.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

const tags = ["operator"];
const Status = Type.Union([Type.Literal("pending"), Type.Literal("approved"), Type.Literal("rejected")]);

/** The operator's side: access inquiries (list, approve, reject) and publishing releases. */
export async function operatorRoutes(
  app: FastifyInstance,
  svc: { access: AccessService; releases: ReleasesService },
): Promise<Route[]> {
  // the bundle is the raw body, streamed to the releases directory while its size and SHA-256 are measured: its
  // route lives in a scope of its own whose one content-type parser hands the stream over unread
  const publish = route({
    method: "POST",
    url: "/v1/operator/onprem/releases",
    operationId: "operatorPublishOnpremRelease",
    tags,
    summary:
      "Publish a release: the bundle's bytes as the raw body (`curl --data-binary @bundle.tar.gz`), ?version and ?architecture (and optionally ?filename, and ?sha256 to check the upload against); the server computes size and SHA-256. 409 when that version and architecture exist.",
    auth: operator,
    errors: ["conflict"],
    query: Type.Object({
      version: Type.String({ pattern: VERSION.source, maxLength: 40 }),
      architecture: Type.String({ pattern: "^[a-z0-9_]{1,20}$", maxLength: 20 }),
      filename: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$", maxLength: 200 })),
      sha256: Type.Optional(Type.String({ pattern: "^[0-9a-fA-F]{64}$", maxLength: 64 })),
    }),
    response: { 201: Release },
    handler: async (request, reply) =>
      reply.code(201).send(releaseView(await svc.releases.publish(request.raw, request.query))),
  });
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser("*", (_request, _payload, done) => done(null));
    registerRoutes(raw, [publish]);
  });

  return [
    route({
      method: "GET",
      url: "/v1/operator/onprem/access-requests",
      operationId: "operatorListOnpremAccessRequests",
      tags,
      summary: "On-premises access inquiries, newest first; ?status=pending for those waiting.",
      auth: operator,
      query: Type.Object({
        status: Type.Optional(Status),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
      }),
      response: { 200: Type.Array(Inquiry) },
      handler: async (request) =>
        (await svc.access.list(request.query.status ?? null, request.query.limit ?? 100)).map(inquiryView),
    }),
    route({
      method: "POST",
      url: "/v1/operator/onprem/access-requests/:id/approve",
      operationId: "operatorApproveOnpremAccess",
      tags,
      summary: "Approve a pending inquiry, with an optional note; its owner may then download, try and buy.",
      auth: operator,
      errors: ["conflict"],
      params: IdParams,
      body: Body({ note: Type.Optional(Type.String({ maxLength: 2000 })) }),
      response: { 200: Inquiry },
      handler: async (request) =>
        inquiryView(await svc.access.decide(request.params.id, "approved", request.body?.note || null)),
    }),
    route({
      method: "POST",
      url: "/v1/operator/onprem/access-requests/:id/reject",
      operationId: "operatorRejectOnpremAccess",
      tags,
      summary: "Reject a pending inquiry with a note the caller sees (GET /v1/onprem/access, rejection_note).",
      auth: operator,
      errors: ["conflict"],
      params: IdParams,
      body: Body({ note: Type.String({ minLength: 1, maxLength: 2000 }) }),
      response: { 200: Inquiry },
      handler: async (request) =>
        inquiryView(await svc.access.decide(request.params.id, "rejected", request.body.note)),
    }),
  ];
}
