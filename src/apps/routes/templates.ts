import { Type } from "@sinclair/typebox";
import { SecretEnv, SecretEnvView } from "../secrets/schemas.js";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import type { Route } from "../../http/route.js";
import { resourceRoutes } from "../../http/resource-routes.js";
import type { TemplatesService } from "../templates/service.js";
import type { TemplateRow } from "../templates/repo.js";
import { Command, Env, Image, SLUG, VolumeMount } from "./schemas.js";
import { ChecksSchema } from "../checks/spec.js";

const Size = Type.String({ minLength: 1, maxLength: 40, description: "nano (free), micro, or a SKU id of /v1/gpus" });

const Template = Type.Object({
  id: Type.String(),
  name: Type.String(),
  image: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  command: Nullable(Type.Array(Type.String())),
  env: Type.Record(Type.String(), Type.String()),
  secret_env: SecretEnvView,
  size: Nullable(Type.String()),
  volumes: Type.Array(Type.Object({ volume: Type.String(), path: Type.String() })),
  databases: Type.Array(Type.String()),
  checks: Nullable(ChecksSchema),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const fields = {
  image: Type.Optional(Image),
  port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
  command: Type.Optional(Nullable(Command)),
  env: Type.Optional(Env),
  secret_env: Type.Optional(SecretEnv),
  checks: Type.Optional(Nullable(ChecksSchema)),
  size: Type.Optional(Size),
  volumes: Type.Optional(Type.Array(VolumeMount, { maxItems: 8 })),
  databases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 8 })),
};
const Name = Type.String({ pattern: SLUG, minLength: 3, maxLength: 40, description: "unique among your templates" });
const validationCodes = { "/name": "bad_slug", "/size": "bad_size", "/image": "bad_image" };

/** Pod templates: saved pod specs that `POST /v1/pods {template}` deploys, the request's fields overriding them. */
export function templateRoutes({ templates }: { templates: TemplatesService }): Route[] {
  const view = (t: TemplateRow) => ({
    id: t.id,
    name: t.name,
    image: t.spec.image ?? null,
    port: t.spec.port ?? null,
    command: t.spec.command ?? null,
    env: templates.envOf(t),
    secret_env: templates.secretEnvOf(t),
    size: t.spec.size ?? null,
    volumes: t.spec.volumes ?? [],
    databases: t.spec.databases ?? [],
    checks: t.spec.checks ?? null,
    created_at: t.created_at.toISOString(),
    updated_at: t.updated_at.toISOString(),
  });

  return resourceRoutes({
    name: "PodTemplate",
    url: "/v1/pod-templates",
    tags: ["pod-templates"],
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "template id or name" }) }),
    scope: "pod-templates",
    instances: true,
    schema: Template,
    view,
    service: templates,
    create: {
      summary:
        "Save a pod spec as a template (201). Every field but the name may be left to the deploy; POST /v1/pods {template} deploys it.",
      summaryKo: "팟 사양을 템플릿으로 저장합니다.",
      errors: ["not_found", "bad_slug", "bad_size", "bad_image", "image_forbidden", "slug_taken"],
      validationCodes,
      body: Body({ name: Name, ...fields }),
    },
    list: {
      summary: "The caller's pod templates; instance-limited keys see their templates.",
      summaryKo: "팟 템플릿 목록.",
    },
    get: { summary: "One pod template by id or name.", summaryKo: "팟 템플릿 하나(id 또는 이름)." },
    update: {
      summary:
        "Replace the given fields (env as a whole; null clears image, port, command or size). Pods deployed from it before keep their spec.",
      summaryKo: "템플릿의 주어진 필드를 바꿉니다(이미 배포된 팟은 그대로).",
      errors: ["bad_slug", "bad_size", "bad_image", "image_forbidden", "slug_taken"],
      validationCodes,
      body: Body({
        ...fields,
        name: Type.Optional(Name),
        image: Type.Optional(Nullable(Image)),
        size: Type.Optional(Nullable(Size)),
      }),
    },
    remove: {
      summary: "Delete the template (204); pods deployed from it keep running.",
      summaryKo: "템플릿을 지웁니다(배포된 팟은 그대로).",
      status: 204,
    },
  });
}
