import type { PodRow } from "./repo.js";
import type { SecretMeta } from "./secrets/env.js";

/** The first fields of a pod's and a pod group's view (RunFields): its names, then what it runs. */
export const runView = (
  names: { id: string; name: string; slug: string },
  spec: { image: string; port: number | null; command: string[] | null },
) => ({
  id: names.id,
  name: names.name,
  slug: names.slug,
  image: spec.image,
  port: spec.port,
  command: spec.command,
});

/** Where an app (a pod or a group) answers: its slug under the apps domain, through the edge's port. */
export const appUrl = (slug: string, urls: { appsDomain: string; edgePort: number }) =>
  `http://${slug}.${urls.appsDomain}${urls.edgePort === 80 ? "" : `:${urls.edgePort}`}`;

/** The public shape of a pod; env is shown to its owner (it is theirs), kept sealed at rest. */
export function podView(
  pod: PodRow,
  env: Record<string, string>,
  urls: { appsDomain: string; edgePort: number },
  secretEnv: Record<string, SecretMeta> = {},
) {
  return {
    ...runView(pod, pod),
    env,
    secret_env: secretEnv,
    size: pod.size,
    gpu: pod.gpu,
    volumes: pod.volumes,
    databases: pod.databases,
    group_id: pod.group_id,
    template_id: pod.template_id,
    state: pod.state,
    desired_state: pod.desired_state,
    state_reason: pod.state_reason,
    idle_stop_seconds: pod.idle_stop_seconds ?? null,
    url: appUrl(pod.slug, urls),
    address: pod.state === "running" ? pod.address : null,
    generation: pod.generation,
    serving_generation: pod.serving_generation,
    restart_count: pod.restart_count,
    cleaned_containers: pod.cleaned_containers ?? 0,
    host_id: pod.host_id,
    checks: pod.checks,
    check_status: pod.check_status as Record<string, never>,
    ready: pod.ready,
    deploy: { stop_grace_seconds: pod.stop_grace_seconds, deadline_seconds: pod.rollout_deadline_seconds },
    release: pod.release,
    rollout: {
      // a rollback stays shown until a newer release serves
      state: (pod.rollback && (pod.rollback as { to_release?: number }).to_release === pod.release
        ? "rollback"
        : pod.serving_generation === pod.generation || pod.desired_state !== "running"
          ? "done"
          : "rolling") as "rollback" | "done" | "rolling",
      rollback: pod.rollback as never,
    },
    created_at: pod.created_at.toISOString(),
    updated_at: pod.updated_at.toISOString(),
  };
}
