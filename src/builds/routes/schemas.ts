import { Type } from "@sinclair/typebox";
import { Nullable, Timestamp } from "../../http/schemas.js";

export const tags = ["builds"];
export const read = { scope: "builds:read", instance: { param: "id" } } as const;
export const write = { scope: "builds:write", instance: { param: "id" } } as const;
export const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "build id" }) });

const Status = Type.Union(
  ["awaiting_upload", "queued", "building", "succeeded", "failed", "cancelled"].map((s) => Type.Literal(s)),
);

export const Build = Type.Object({
  id: Type.String(),
  status: Status,
  status_reason: Nullable(Type.String({ description: "why it failed or was cancelled" })),
  phase: Nullable(Type.String({ description: "the builder's step: pulling, building, pushing, deploying" })),
  app: Nullable(
    Type.Object({
      kind: Type.Union([Type.Literal("pod"), Type.Literal("group")]),
      id: Type.String(),
      slug: Type.String(),
    }),
  ),
  dockerfile: Type.String(),
  context_path: Type.String(),
  host_id: Type.String(),
  upload_expires_at: Timestamp,
  uploaded_at: Nullable(Timestamp),
  source_bytes: Nullable(Type.Integer()),
  image: Nullable(Type.String({ description: "the pushed image: <registry>/<namespace>/<repository>:build-<id>" })),
  digest: Nullable(Type.String({ description: "its manifest digest (sha256:...)" })),
  deployed_at: Nullable(Timestamp),
  deploy_error: Nullable(Type.String()),
  build_args: Type.Record(Type.String(), Type.String(), { description: "the build arguments given" }),
  build_secrets: Type.Record(Type.String(), Type.Object({ fingerprint: Type.String() }), {
    description: "the build secrets given, by name, with fingerprints (HMAC-SHA256); values are never returned",
  }),
  cancel: Nullable(
    Type.Object({ reason: Nullable(Type.String()), phase: Nullable(Type.String()), detail: Type.Unknown() }),
  ),
  created_at: Timestamp,
  queued_at: Nullable(Timestamp),
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  updated_at: Timestamp,
});

export const Event = Type.Object({
  id: Type.Integer(),
  phase: Type.String(),
  level: Type.String(),
  message: Type.String(),
  detail: Type.Unknown(),
  created_at: Timestamp,
});

export const BuildDetail = Type.Composite([
  Build,
  Type.Object({
    logs: Type.String({ description: "the builder's output, its last BUILD_LOG_BYTES characters" }),
    logs_dropped: Type.Integer({ description: "characters cut from the front of logs" }),
    events: Type.Array(Event, { description: "client-side steps, oldest first" }),
  }),
]);

export const Created = Type.Composite([
  Build,
  Type.Object({
    upload_url: Type.String({
      description:
        "PUT the source archive (tar.gz) here, e.g. `curl -T src.tar.gz <upload_url>`; no bearer needed, works once, until upload_expires_at",
    }),
  }),
]);
