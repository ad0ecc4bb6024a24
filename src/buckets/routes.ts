import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { Principal } from "../auth/principal.js";
import { Body, NoContent, Nullable, Timestamp } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import { resourceRoutes } from "../http/resource-routes.js";
import type { BucketsService } from "./service.js";
import type { BucketRow, KeyRow } from "./repo.js";
import { noContentAfter } from "../http/no-content.js";

const tags = ["buckets"];
const caller = (request: FastifyRequest): Principal => request.principal!;
const write = { scope: "buckets:write", instance: { param: "id" } } as const;
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "id or name" }) });

/** Where clients reach the gateway, for the bucket views. */
export interface S3Endpoint {
  /** the path-style endpoint (S3_PUBLIC_URL, or this gateway's listener) */
  url(): string;
  region: string;
  /** virtual-host style: https?://<bucket>.<domain>[:port] */
  domain: string;
}

const Bucket = Type.Object({
  id: Type.String(),
  name: Type.String(),
  endpoint: Type.String({ description: "S3 endpoint for path-style clients (forcePathStyle)" }),
  virtual_host: Type.String({ description: "the bucket's virtual-host-style address" }),
  region: Type.String(),
  size_bytes: Type.Integer({ description: "bytes of the bucket's objects" }),
  object_count: Type.Integer(),
  created_at: Timestamp,
  uploads_in_progress: Type.Optional(Type.Integer()),
  upload_bytes: Type.Optional(Type.Integer({ description: "bytes held by parts of uploads in progress" })),
});

const AccessKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  access_key_id: Type.String(),
  permission: Type.Union([Type.Literal("read"), Type.Literal("read_write")]),
  bucket_ids: Nullable(
    Type.Array(Type.String(), { description: "null: every bucket of the owner, present and future" }),
  ),
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
  secret_access_key: Type.Optional(Type.String({ description: "shown once, at creation" })),
  endpoint: Type.String(),
  region: Type.String(),
});

/** The buckets area's operations: buckets and their S3 access keys. */
export function bucketRoutes(svc: BucketsService, s3: S3Endpoint): Route[] {
  const view = (b: BucketRow & { uploads_in_progress?: number; upload_bytes?: number }) => {
    const endpoint = s3.url();
    const u = new URL(endpoint);
    return {
      id: b.id,
      name: b.name,
      endpoint,
      virtual_host: `${u.protocol}//${b.name}.${s3.domain}${u.port ? `:${u.port}` : ""}`,
      region: s3.region,
      size_bytes: b.size_bytes,
      object_count: b.object_count,
      created_at: b.created_at.toISOString(),
      ...(b.uploads_in_progress !== undefined
        ? { uploads_in_progress: b.uploads_in_progress, upload_bytes: b.upload_bytes }
        : {}),
    };
  };
  const keyView = (k: KeyRow, secret?: string) => ({
    id: k.id,
    name: k.name,
    access_key_id: k.access_key_id,
    permission: k.permission,
    bucket_ids: k.bucket_ids,
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
    ...(secret !== undefined ? { secret_access_key: secret } : {}),
    endpoint: s3.url(),
    region: s3.region,
  });

  return [
    ...resourceRoutes({
      name: "Bucket",
      url: "/v1/buckets",
      tags,
      params: Params,
      scope: "buckets",
      instances: true,
      schema: Bucket,
      view,
      list: {
        summary: "The caller's buckets with their S3 endpoint, region and size.",
        summaryKo: "버킷 목록.",
        run: (caller, filter) => svc.list(caller, filter),
      },
      create: {
        summary:
          "Create an S3-compatible bucket; the name follows S3 naming rules and is unique platform-wide (409 when taken).",
        summaryKo: "S3 호환 버킷을 만듭니다(이름은 플랫폼 전체에서 고유).",
        admits: true,
        errors: ["invalid_request", "slug_taken"],
        body: Body({ name: Type.String({ minLength: 3, maxLength: 63 }) }),
        run: (caller, body) => svc.create(caller, body),
      },
      get: {
        summary: "One bucket by id or name: S3 endpoint, region, size and object count, uploads in progress.",
        summaryKo: "버킷 상세(엔드포인트, 리전, 크기).",
        run: (caller, id) => svc.detail(caller, id),
      },
    }),
    ...resourceRoutes({
      name: "BucketKey",
      url: "/v1/buckets/keys",
      tags,
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
      scope: "buckets",
      instances: true,
      schema: AccessKey,
      view: (k: KeyRow) => keyView(k),
      list: {
        summary: "The caller's live S3 access keys (secrets are never shown again).",
        summaryKo: "S3 액세스 키 목록(비밀 키 제외).",
        run: (caller, filter) => svc.listKeys(caller, filter),
      },
      create: {
        summary:
          "Issue an S3 access key for some buckets (bucket_ids: ids or names) or all of the owner's (omitted), read or read_write; the secret is shown once.",
        summaryKo: "S3 액세스 키를 발급합니다(비밀 키는 한 번만 표시).",
        errors: ["not_found"],
        body: Body({
          name: Type.String({ minLength: 1, maxLength: 100 }),
          bucket_ids: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100 }),
          ),
          permission: Type.Union([Type.Literal("read"), Type.Literal("read_write")]),
        }),
        run: (caller, body) => svc.createKey(caller, body),
        answer: { schema: AccessKey, view: ({ row, secret }) => keyView(row, secret) },
      },
    }),
    route({
      method: "DELETE",
      url: "/v1/buckets/keys/:id",
      operationId: "revokeBucketKey",
      tags,
      summary: "Revoke an S3 access key; the gateway refuses it from the next request on.",
      summaryKo: "S3 액세스 키를 폐기합니다(게이트웨이가 즉시 거부).",
      auth: { scope: "buckets:write", instance: "create" },
      errors: ["forbidden_role"],
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: { 204: NoContent },
      handler: async (request, reply) => noContentAfter(reply, svc.revokeKey(caller(request), request.params.id)),
    }),
    route({
      method: "DELETE",
      url: "/v1/buckets/:id",
      operationId: "deleteBucket",
      tags,
      summary:
        "Delete a bucket; one holding objects or uploads in progress answers 409 bucket_not_empty unless ?force=1.",
      summaryKo: "버킷을 삭제합니다(비어 있지 않으면 ?force=1 필요).",
      auth: write,
      errors: ["bucket_not_empty"],
      params: Params,
      query: Type.Object({ force: Type.Optional(Type.Union([Type.Literal("0"), Type.Literal("1")])) }),
      response: { 204: NoContent },
      handler: async (request, reply) =>
        noContentAfter(reply, svc.remove(caller(request), request.params.id, request.query.force === "1")),
    }),
  ];
}
