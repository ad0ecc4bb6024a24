import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { Body } from "../../http/schemas.js";
import type { AccessService } from "../access-service.js";
import { VERSION } from "../config.js";
import type { ReleasesService } from "../releases-service.js";
import { IdParams, Inquiry, inquiryView, operator, Release, releaseView } from "./schemas.js";

const tags = ["operator"];
const Status = Type.Union([Type.Literal("pending"), Type.Literal("approved"), Type.Literal("rejected")]);

/** The operator's side: access inquiries (list, approve, reject) and publishing releases. */
export async function operatorRoutes(
  app: FastifyInstance,
  svc: { access: AccessService; releases: ReleasesService },
): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/operator/onprem/access-requests",
    {
      config: { auth: operator, errors: [] },
      schema: {
        operationId: "operatorListOnpremAccessRequests",
        tags,
        summary: "On-premises access inquiries, newest first; ?status=pending for those waiting.",
        querystring: Type.Object({
          status: Type.Optional(Status),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
        }),
        response: { 200: Type.Array(Inquiry) },
      },
    },
    async (request) =>
      (await svc.access.list(request.query.status ?? null, request.query.limit ?? 100)).map(inquiryView),
  );

  r.post(
    "/v1/operator/onprem/access-requests/:id/approve",
    {
      config: { auth: operator, errors: ["not_found", "conflict"] },
      schema: {
        operationId: "operatorApproveOnpremAccess",
        tags,
        summary: "Approve a pending inquiry, with an optional note; its owner may then download, try and buy.",
        params: IdParams,
        body: Body({ note: Type.Optional(Type.String({ maxLength: 2000 })) }),
        response: { 200: Inquiry },
      },
    },
    async (request) => inquiryView(await svc.access.decide(request.params.id, "approved", request.body?.note || null)),
  );

  r.post(
    "/v1/operator/onprem/access-requests/:id/reject",
    {
      config: { auth: operator, errors: ["not_found", "conflict"] },
      schema: {
        operationId: "operatorRejectOnpremAccess",
        tags,
        summary: "Reject a pending inquiry with a note the caller sees (GET /v1/onprem/access, rejection_note).",
        params: IdParams,
        body: Body({ note: Type.String({ minLength: 1, maxLength: 2000 }) }),
        response: { 200: Inquiry },
      },
    },
    async (request) => inquiryView(await svc.access.decide(request.params.id, "rejected", request.body.note)),
  );

  // the bundle is the raw body, streamed to the releases directory while its size and SHA-256 are measured
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser("*", (_request, _payload, done) => done(null));
    raw.withTypeProvider<TypeBoxTypeProvider>().post(
      "/v1/operator/onprem/releases",
      {
        config: { auth: operator, errors: ["conflict"] },
        schema: {
          operationId: "operatorPublishOnpremRelease",
          tags,
          summary:
            "Publish a release: the bundle's bytes as the raw body (`curl --data-binary @bundle.tar.gz`), ?version and ?architecture (and optionally ?filename, and ?sha256 to check the upload against); the server computes size and SHA-256. 409 when that version and architecture exist.",
          querystring: Type.Object({
            version: Type.String({ pattern: VERSION.source, maxLength: 40 }),
            architecture: Type.String({ pattern: "^[a-z0-9_]{1,20}$", maxLength: 20 }),
            filename: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$", maxLength: 200 })),
            sha256: Type.Optional(Type.String({ pattern: "^[0-9a-fA-F]{64}$", maxLength: 64 })),
          }),
          response: { 201: Release },
        },
      },
      async (request, reply) =>
        reply.code(201).send(releaseView(await svc.releases.publish(request.raw, request.query))),
    );
  });
}
