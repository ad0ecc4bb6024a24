import { Type } from "@sinclair/typebox";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import type { Route } from "../../http/route.js";
import { resourceRoutes } from "../../http/resource-routes.js";
import type { VolumesService } from "../volumes/service.js";
import type { VolumeWithPod } from "../volumes/repo.js";
import { SLUG } from "./schemas.js";

const Volume = Type.Object({
  id: Type.String(),
  name: Type.String(),
  size_gb: Type.Integer(),
  state: Type.Union(["creating", "ready", "failed", "removed"].map((s) => Type.Literal(s))),
  state_reason: Nullable(Type.String()),
  host_id: Nullable(Type.String()),
  attached_to: Nullable(Type.String({ description: "the live pod mounting the volume (one at a time)" })),
  used_bytes: Nullable(Type.Integer({ description: "bytes in use; null until ready or when measured elsewhere" })),
  created_at: Timestamp,
});

/** Volumes: fixed-size file systems that pods mount; the data outlives pod restarts, updates and re-creation. */
export function volumeRoutes({ volumes }: { volumes: VolumesService }): Route[] {
  const view = async (v: VolumeWithPod) => ({
    id: v.id,
    name: v.name,
    size_gb: v.size_gb,
    state: v.state,
    state_reason: v.state_reason,
    host_id: v.host_id,
    attached_to: v.attached_to,
    used_bytes: await volumes.usedBytes(v),
    created_at: v.created_at.toISOString(),
  });

  return resourceRoutes({
    name: "Volume",
    url: "/v1/volumes",
    tags: ["volumes"],
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "volume id or name" }) }),
    scope: "volumes",
    instances: true,
    schema: Volume,
    view,
    service: volumes,
    create: {
      summary:
        "Create a fixed-size volume (201, state creating; ready once the host made its file system). Storage is paid per GB-hour until it is deleted.",
      summaryKo: "고정 크기 볼륨을 만듭니다(준비되면 state가 ready).",
      admits: true,
      errors: ["bad_slug", "slug_taken", "host_unavailable", "runtime_unavailable"],
      validationCodes: { "/name": "bad_slug" },
      body: Body({
        name: Type.String({ pattern: SLUG, minLength: 3, maxLength: 40, description: "unique among your volumes" }),
        size_gb: Type.Integer({ minimum: 1, maximum: 1024 }),
      }),
    },
    list: {
      summary: "The caller's volumes, removed ones excluded; instance-limited keys see their volumes.",
      summaryKo: "볼륨 목록(삭제된 것 제외).",
    },
    get: {
      summary: "One volume by id or name: state, the pod mounting it, bytes used.",
      summaryKo: "볼륨 하나(id 또는 이름)와 사용량.",
    },
    remove: {
      summary:
        "Delete the volume and its data (202, state removed); 409 volume_in_use while a pod mounts it: delete the pod first.",
      summaryKo: "볼륨과 그 데이터를 지웁니다. 팟이 마운트 중이면 409입니다.",
      errors: ["volume_in_use"],
      status: 202,
    },
  });
}
