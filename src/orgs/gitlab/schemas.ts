import { Type } from "@sinclair/typebox";
import { Body, Nullable } from "../../http/schemas.js";
import type { SettingsRow, SyncRow } from "./repo.js";

const PATH = "^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$";

const settingsFields = {
  base_url: Type.String({
    minLength: 1,
    maxLength: 500,
    description: "the GitLab instance, e.g. https://gitlab.example.com",
  }),
  group_path: Type.String({ minLength: 1, maxLength: 255, pattern: PATH, description: "full path of the group" }),
  archive_enabled: Type.Optional(Type.Boolean({ default: false })),
  gitops_enabled: Type.Optional(Type.Boolean({ default: false })),
  gitops_repo: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: PATH,
        description: "the GitOps project: a full path, or a project name in the group (made when missing)",
      }),
    ),
  ),
  gitops_namespace: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 63,
        pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        description: "the manifests' namespace and the repository folder they are written to",
      }),
    ),
  ),
  gitops_host_pattern: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 253,
        pattern: "^[A-Za-z0-9.{}-]*\\{slug\\}[A-Za-z0-9.{}-]*$",
        description:
          "the Ingress host of each app; {slug} (required) and {namespace} are replaced, e.g. {slug}.apps.example.com",
      }),
    ),
  ),
  gitops_auto_sync: Type.Optional(Type.Boolean({ default: false })),
};

export const PutBody = Body({
  ...settingsFields,
  token: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: "a GitLab access token with the api scope; omitted: kept",
    }),
  ),
});

export const TestBody = Type.Optional(
  Body({
    base_url: Type.Optional(settingsFields.base_url),
    group_path: Type.Optional(settingsFields.group_path),
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  }),
);

export const Integration = Type.Object({
  configured: Type.Boolean({ description: "false: no integration (every other field is null or false)" }),
  base_url: Nullable(Type.String()),
  group_path: Nullable(Type.String()),
  token: Nullable(Type.String({ description: "masked: asterisks and the last 4 characters" })),
  token_set: Type.Boolean(),
  archive_enabled: Type.Boolean(),
  gitops_enabled: Type.Boolean(),
  gitops_repo: Nullable(Type.String()),
  gitops_namespace: Nullable(Type.String()),
  gitops_host_pattern: Nullable(Type.String()),
  gitops_auto_sync: Type.Boolean(),
  created_at: Nullable(Type.String()),
  updated_at: Nullable(Type.String()),
});

export const mask = (token: string) => (token.length >= 12 ? `****${token.slice(-4)}` : "****");

export function integrationView(s: SettingsRow | null, token: string | null) {
  return {
    configured: s !== null,
    base_url: s?.base_url ?? null,
    group_path: s?.group_path ?? null,
    token: token === null ? null : mask(token),
    token_set: token !== null,
    archive_enabled: s?.archive_enabled ?? false,
    gitops_enabled: s?.gitops_enabled ?? false,
    gitops_repo: s?.gitops_repo ?? null,
    gitops_namespace: s?.gitops_namespace ?? null,
    gitops_host_pattern: s?.gitops_host_pattern ?? null,
    gitops_auto_sync: s?.gitops_auto_sync ?? false,
    created_at: s?.created_at.toISOString() ?? null,
    updated_at: s?.updated_at.toISOString() ?? null,
  };
}

export const TestResult = Type.Object({
  ok: Type.Boolean(),
  gitlab_version: Nullable(Type.String()),
  group_name: Nullable(Type.String()),
  group_web_url: Nullable(Type.String()),
  error: Nullable(Type.String({ description: "why the check failed, in a sentence" })),
});

export const Sync = Type.Object({
  id: Type.String(),
  app_kind: Type.String({ description: "pod, pod-group or site" }),
  app_id: Type.String(),
  app_slug: Type.String(),
  kind: Type.String({ description: "archive, gitops or auto_sync" }),
  status: Type.String({ description: "queued, running, succeeded, failed or skipped" }),
  revision: Nullable(
    Type.String({ description: "what the scan saw: a deployment id, a spec digest, a manifest commit" }),
  ),
  project_path: Nullable(Type.String()),
  commit_id: Nullable(Type.String()),
  detail: Nullable(Type.String()),
  error: Nullable(Type.String({ description: "why it failed or was skipped; while queued, the last attempt's error" })),
  attempts: Type.Integer(),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
});

export const syncView = (r: SyncRow) => ({
  id: r.id,
  app_kind: r.app_kind,
  app_id: r.app_id,
  app_slug: r.app_slug,
  kind: r.kind,
  status: r.status,
  revision: r.revision,
  project_path: r.project_path,
  commit_id: r.commit_id,
  detail: r.detail,
  error: r.error,
  attempts: r.attempts,
  created_at: r.created_at.toISOString(),
  started_at: r.started_at?.toISOString() ?? null,
  finished_at: r.finished_at?.toISOString() ?? null,
});

export const SyncsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) },
  { additionalProperties: false },
);
