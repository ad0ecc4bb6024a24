import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, NoContent, Nullable, Timestamp } from "../../http/schemas.js";
import type { TemplatesService } from "../templates/service.js";
import type { TemplateRow } from "../templates/repo.js";
import { Command, Env, Image, SLUG, VolumeMount } from "./schemas.js";

const tags = ["pod-templates"];
const read = { scope: "pod-templates:read", instance: { param: "id" } } as const;
const write = { scope: "pod-templates:write", instance: { param: "id" } } as const;
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "template id or name" }) });
const Size = Type.String({ minLength: 1, maxLength: 40, description: "nano (free), micro, or a SKU id of /v1/gpus" });

const Template = Type.Object({
  id: Type.String(),
  name: Type.String(),
  image: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  command: Nullable(Type.Array(Type.String())),
  env: Type.Record(Type.String(), Type.String()),
  size: Nullable(Type.String()),
  volumes: Type.Array(Type.Object({ volume: Type.String(), path: Type.String() })),
  databases: Type.Array(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const fields = {
  image: Type.Optional(Image),
  port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
  command: Type.Optional(Nullable(Command)),
  env: Type.Optional(Env),
  size: Type.Optional(Size),
  volumes: Type.Optional(Type.Array(VolumeMount, { maxItems: 8 })),
  databases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 8 })),
};
const Name = Type.String({ pattern: SLUG, minLength: 3, maxLength: 40, description: "unique among your templates" });
const validationCodes = { "/name": "bad_slug", "/size": "bad_size", "/image": "bad_image" };

/** Pod templates: saved pod specs that `POST /v1/pods {template}` deploys, the request's fields overriding them. */
export function templateRoutes(app: FastifyInstance, { templates }: { templates: TemplatesService }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const view = (t: TemplateRow) => ({
    id: t.id,
    name: t.name,
    image: t.spec.image ?? null,
    port: t.spec.port ?? null,
    command: t.spec.command ?? null,
    env: templates.envOf(t),
    size: t.spec.size ?? null,
    volumes: t.spec.volumes ?? [],
    databases: t.spec.databases ?? [],
    created_at: t.created_at.toISOString(),
    updated_at: t.updated_at.toISOString(),
  });

  r.post(
    "/v1/pod-templates",
    {
      config: {
        auth: { scope: "pod-templates:write", instance: "create" },
        validationCodes,
        errors: ["not_found", "bad_slug", "bad_size", "bad_image", "image_forbidden", "slug_taken"],
        summaryKo: "팟 사양을 템플릿으로 저장합니다.",
      },
      schema: {
        operationId: "createPodTemplate",
        tags,
        summary:
          "Save a pod spec as a template (201). Every field but the name may be left to the deploy; POST /v1/pods {template} deploys it.",
        body: Body({ name: Name, ...fields }),
        response: { 201: Template },
      },
    },
    async (request, reply) => reply.code(201).send(view(await templates.create(callerOf(request), request.body))),
  );

  r.get(
    "/v1/pod-templates",
    {
      config: {
        auth: { scope: "pod-templates:read", instance: "list" },
        errors: [],
        summaryKo: "팟 템플릿 목록.",
      },
      schema: {
        operationId: "listPodTemplates",
        tags,
        summary: "The caller's pod templates; instance-limited keys see their templates.",
        response: { 200: Type.Array(Template) },
      },
    },
    async (request) => (await templates.list(callerOf(request), request.instanceFilter)).map(view),
  );

  r.get(
    "/v1/pod-templates/:id",
    {
      config: { auth: read, errors: ["not_found"], summaryKo: "팟 템플릿 하나(id 또는 이름)." },
      schema: {
        operationId: "getPodTemplate",
        tags,
        summary: "One pod template by id or name.",
        params: Params,
        response: { 200: Template },
      },
    },
    async (request) => view(await templates.get(callerOf(request), request.params.id)),
  );

  r.patch(
    "/v1/pod-templates/:id",
    {
      config: {
        auth: write,
        validationCodes,
        errors: ["not_found", "bad_slug", "bad_size", "bad_image", "image_forbidden", "slug_taken"],
        summaryKo: "템플릿의 주어진 필드를 바꿉니다(이미 배포된 팟은 그대로).",
      },
      schema: {
        operationId: "updatePodTemplate",
        tags,
        summary:
          "Replace the given fields (env as a whole; null clears image, port, command or size). Pods deployed from it before keep their spec.",
        params: Params,
        body: Body({
          ...fields,
          name: Type.Optional(Name),
          image: Type.Optional(Nullable(Image)),
          size: Type.Optional(Nullable(Size)),
        }),
        response: { 200: Template },
      },
    },
    async (request) => view(await templates.update(callerOf(request), request.params.id, request.body)),
  );

  r.delete(
    "/v1/pod-templates/:id",
    {
      config: { auth: write, errors: ["not_found"], summaryKo: "템플릿을 지웁니다(배포된 팟은 그대로)." },
      schema: {
        operationId: "deletePodTemplate",
        tags,
        summary: "Delete the template (204); pods deployed from it keep running.",
        params: Params,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await templates.remove(callerOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
