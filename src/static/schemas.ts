import { Type } from "@sinclair/typebox";
import type { Readable } from "node:stream";
import { Body, Nullable, Timestamp } from "../http/schemas.js";

export const tags = ["static"];
export const read = { scope: "static:read", instance: { param: "slug" } } as const;
export const write = { scope: "static:write", instance: { param: "slug" } } as const;
export const SLUG = "^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$";

export const SiteParams = Type.Object({
  slug: Type.String({ minLength: 1, maxLength: 64, description: "the site's slug or id" }),
});
export const DeploymentParams = Type.Object({
  slug: Type.String({ minLength: 1, maxLength: 64, description: "the site's slug or id" }),
  id: Type.String({ minLength: 1, maxLength: 64, description: "deployment id" }),
});

export const NotFoundPage = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'a file of the deployment answered with 404 for unknown paths, e.g. "404.html"; null: the edge\'s page',
});

/** POST /v1/static: a new site */
export const SiteBody = Body({
  name: Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 }),
  slug: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
  spa: Type.Optional(Type.Boolean({ description: "unknown paths without an extension answer index.html" })),
  not_found_page: Type.Optional(Nullable(NotFoundPage)),
});
/** PATCH /v1/static/{slug}: the fields to change; the slug stays */
export const SitePatchBody = Body({
  name: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
  spa: Type.Optional(Type.Boolean()),
  not_found_page: Type.Optional(Nullable(NotFoundPage)),
});

const VISIBILITY_LEVELS = ["private", "invited", "department", "company", "public"].map((v) => Type.Literal(v));

export const Site = Type.Object({
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  url: Type.String({ description: "the site at the edge: http://<slug>.<APPS_DOMAIN>[:EDGE_PORT]" }),
  spa: Type.Boolean({ description: "unknown paths without an extension answer index.html (single-page apps)" }),
  not_found_page: Nullable(Type.String()),
  visibility: Type.Union(VISIBILITY_LEVELS, {
    description:
      "what the edge enforces: public (anyone) for a personal site; an organization's site per its visibility (src/orgs README, Site visibility)",
  }),
  visibility_source: Type.Union(
    ["site", "organization_default", "organization_maximum"].map((s) => Type.Literal(s)),
    {
      description:
        "where `visibility` comes from: site (its own setting), organization_default (it has none), organization_maximum (capped by the organization's max_visibility)",
    },
  ),
  site_visibility: Type.Union([...VISIBILITY_LEVELS, Type.Null()], {
    description: "the site's own setting; null: none (the organization's default)",
  }),
  live_deployment_id: Nullable(Type.String({ description: "the deployment served now; null: nothing finalized yet" })),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const Deployment = Type.Object({
  id: Type.String(),
  site_id: Type.String(),
  site_slug: Type.String(),
  status: Type.Union(
    ["awaiting_upload", "uploaded", "live", "superseded"].map((s) => Type.Literal(s)),
    {
      description: "awaiting_upload → uploaded (files recorded) → live (finalized); superseded: finalized earlier",
    },
  ),
  upload_url: Nullable(
    Type.String({ description: "PUT the archive here (tar, tar.gz or zip as the raw body); null once uploaded" }),
  ),
  max_bytes: Type.Integer({ description: "the largest archive, and unpacked total, accepted" }),
  max_files: Type.Integer(),
  file_count: Type.Integer(),
  bytes: Type.Integer({ description: "the files' total size, unpacked" }),
  created_at: Timestamp,
  uploaded_at: Nullable(Timestamp),
  finalized_at: Nullable(Timestamp),
});

/** Media types an archive may be sent as; the format itself is told by its first bytes. */
export const ARCHIVE_TYPES = [
  "application/x-tar",
  "application/gzip",
  "application/x-gzip",
  "application/zip",
  "application/x-zip-compressed",
  "application/octet-stream",
];

/**
 * An upload's body: the request stream, unread, handed through by the route's content-type parser. No own
 * enumerable fields, so the HTTP layer's body checks (unknown fields, unstorable text) see nothing to check.
 */
export class RawUpload {
  readonly #stream: Readable;
  constructor(stream: Readable) {
    this.#stream = stream;
  }
  get stream(): Readable {
    return this.#stream;
  }
}
