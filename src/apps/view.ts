import type { PodRow } from "./repo.js";
import type { SecretMeta } from "./secrets/env.js";

/** The public shape of a pod; env is shown to its owner (it is theirs), kept sealed at rest. */
export function podView(
  pod: PodRow,
  env: Record<string, string>,
  urls: { appsDomain: string; edgePort: number },
  secretEnv: Record<string, SecretMeta> = {},
) {
  const port = urls.edgePort === 80 ? "" : `:${urls.edgePort}`;
  return {
    id: pod.id,
    name: pod.name,
    slug: pod.slug,
    image: pod.image,
    port: pod.port,
    command: pod.command,
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
    url: `http://${pod.slug}.${urls.appsDomain}${port}`,
    address: pod.state === "running" ? pod.address : null,
    generation: pod.generation,
    serving_generation: pod.serving_generation,
    restart_count: pod.restart_count,
    cleaned_containers: pod.cleaned_containers ?? 0,
    host_id: pod.host_id,
    created_at: pod.created_at.toISOString(),
    updated_at: pod.updated_at.toISOString(),
  };
}
