import type { AppImages, AppRef, AppRelease, AppSpec, NewPodSpec } from "./contract.js";
import type { SecretBox } from "../kernel/secrets.js";
import { readEnvDoc } from "./secrets/env.js";
import type { Principal } from "../auth/principal.js";
import { ApiError, asApiError } from "../http/errors.js";
import type { PodsService } from "./service.js";
import type { GroupsService } from "./groups/service.js";

/**
 * What builds deploy to (kernel.use("appImages")): the caller's live pod or pod group by id or slug; a pod that is a
 * group's member stands for its group (its members share one spec). Deploying is the same rolling update as
 * `PATCH /v1/pods/{id}` or `PATCH /v1/pod-groups/{id}` with `{image}`.
 */
export function appImages(pods: PodsService, groups: GroupsService, secrets: SecretBox): AppImages {
  const missing = (err: unknown) => asApiError(err)?.code === "not_found";

  async function find(p: Principal, ref: string): Promise<AppRef | null> {
    const pod = await pods.get(p, ref).catch((err) => (missing(err) ? null : Promise.reject(err)));
    if (pod && pod.desired_state !== "removed" && !pod.group_id) return { kind: "pod", id: pod.id, slug: pod.slug };
    const groupRef = pod?.desired_state !== "removed" && pod?.group_id ? pod.group_id : ref;
    const found = await groups.get(p, groupRef).catch((err) => (missing(err) ? null : Promise.reject(err)));
    if (!found || found.group.desired_state === "removed") return null;
    return { kind: "group", id: found.group.id, slug: found.group.slug };
  }

  async function deploy(p: Principal, app: AppRef, image: string): Promise<void> {
    if (app.kind === "pod") await pods.update(p, app.id, { image });
    else await groups.update(p, app.id, { image });
  }

  /** a pod's or group's spec (organizations' GitOps manifests); null when removed */
  async function describe(p: Principal, app: AppRef): Promise<AppSpec | null> {
    if (app.kind === "pod") {
      const pod = await pods.get(p, app.id).catch((err) => (missing(err) ? null : Promise.reject(err)));
      if (!pod || pod.desired_state === "removed") return null;
      const one = { replicaMin: 1, replicaMax: 1, targetCpuPercent: null };
      return { image: pod.image, size: pod.size, port: pod.port, ...one };
    }
    const found = await groups.get(p, app.id).catch((err) => (missing(err) ? null : Promise.reject(err)));
    if (!found || found.group.desired_state === "removed") return null;
    const g = found.group;
    return {
      ...{ image: g.spec.image, size: g.spec.size, port: g.spec.port },
      ...{ replicaMin: g.replica_min, replicaMax: g.replica_max, targetCpuPercent: g.target_cpu_percent },
    };
  }

  /** a pod's wanted release (what it was last changed to), with its env and secrets, for cron jobs */
  async function releaseOf(p: Principal, app: AppRef): Promise<AppRelease | null> {
    if (app.kind !== "pod") return null;
    const pod = await pods.get(p, app.id).catch((err) => (missing(err) ? null : Promise.reject(err)));
    if (!pod || pod.desired_state === "removed") return null;
    const doc = readEnvDoc(secrets, pod.env_sealed);
    return { image: pod.image, release: pod.release, env: doc.plain, secretEnv: doc.secret, secretMeta: doc.meta };
  }

  async function scale(p: Principal, app: AppRef, bounds: { min: number; max: number }): Promise<void> {
    if (app.kind !== "group") throw new ApiError("invalid_request", "A pod runs one replica; only pod groups scale.");
    await groups.update(p, app.id, { replica_min: bounds.min, replica_max: bounds.max });
  }

  async function createPod(p: Principal, spec: NewPodSpec): Promise<AppRef> {
    const pod = await pods.create(p, {
      ...{ name: spec.name, slug: spec.slug, image: spec.image, port: spec.port, size: spec.size },
      ...{ env: spec.env, secret_env: spec.secretEnv, idle_stop_seconds: spec.idleStopSeconds ?? undefined },
      ...(spec.databases?.length ? { databases: spec.databases } : {}),
    });
    return { kind: "pod", id: pod.id, slug: pod.slug };
  }

  async function removePod(p: Principal, podId: string): Promise<void> {
    await pods.transition(p, podId, "delete").catch((err) => (missing(err) ? null : Promise.reject(err)));
  }

  return { find, deploy, describe, releaseOf, scale, createPod, removePod };
}
