import type { Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import { ownerKey, type Owner } from "../kernel/owner.js";
import type { SecretBox } from "../kernel/secrets.js";
import type { ContainerSpec, RuntimeProvider } from "../runtime/provider.js";
import { RuntimeError } from "../runtime/provider.js";
import { ownerNetworkName } from "../runtime/index.js";
import type { VolumeStore } from "../runtime/volumes.js";
import type { PodRow } from "./repo.js";
import { findOwnerNetwork, saveOwnerNetwork, type OwnerNetworkRow } from "./networks-repo.js";
import { limitsOf, podSizes } from "./sizes.js";

/** What turning a pod row into a container needs; built once per host by the apps module. */
export interface SpecDeps {
  db: Db;
  runtime: RuntimeProvider;
  volumes: VolumeStore;
  kernel: Pick<Kernel, "all" | "use">;
  secrets: SecretBox;
  hostId: string;
  gpuCatalogFile: string;
  /** the owner's network is new or changed: the databases re-apply their allowlists (they admit its subnet) */
  networkChanged: (owner: Owner) => void;
}

export const ENV_COLUMN = "pods.env";
export const LABEL_POD = "platform.pod";
export const LABEL_GENERATION = "platform.generation";
export const LABEL_HOST = "platform.host";

/** Container names say which pod and generation they run, so a name is enough to adopt one after a restart. */
export const containerName = (podId: string, generation: number): string =>
  `pod-${podId.replace(/-/g, "").slice(0, 16)}-g${generation}`;

/** The owner's network on this host, created once and remembered (the databases' allowlist admits its subnet). */
export async function ownerNetwork(deps: SpecDeps, owner: Owner): Promise<OwnerNetworkRow> {
  const known = await findOwnerNetwork(deps.db, owner, deps.hostId);
  const made = await deps.runtime.ensureNetwork(known?.name ?? ownerNetworkName(owner));
  if (!known || known.subnet !== made.subnet || known.gateway !== made.gateway) {
    await saveOwnerNetwork(deps.db, owner, deps.hostId, made);
    deps.networkChanged(owner);
  }
  return made;
}

export const sealEnv = (secrets: SecretBox, env: Record<string, string>): string =>
  secrets.seal(JSON.stringify(env), ENV_COLUMN);
/** every value the container gets; "$secrets" marks which are secret (src/apps/secrets/env.ts) and is not env */
export function openEnv(secrets: SecretBox, sealed: string): Record<string, string> {
  const env = JSON.parse(secrets.open(sealed, ENV_COLUMN)) as Record<string, string>;
  delete env["$secrets"];
  return env;
}

/**
 * The container a pod's current generation runs as. Attached databases are resolved now, so a rotated
 * password reaches the next generation; their loopback host becomes the network's gateway, which is this
 * host as the container sees it. The first attached database is DATABASE_URL, every one is also
 * DATABASE_URL_<SLUG> (the user's own env never overrides what attachment injects).
 */
export async function containerSpecOf(deps: SpecDeps, pod: PodRow): Promise<ContainerSpec> {
  const owner: Owner = { kind: pod.owner_kind, id: pod.owner_id };
  const network = await ownerNetwork(deps, owner);
  const env = openEnv(deps.secrets, pod.env_sealed);
  const source = deps.kernel.all("attachables").find((a) => a.resource === "databases");
  for (const [i, ref] of pod.databases.entries()) {
    const found = source && (await source.resolve(deps.db, owner, ref));
    if (!found) throw new RuntimeError(`attached database ${ref} no longer exists`, "bad_spec");
    for (const [k, v] of Object.entries(found.env)) {
      // the URL names the host-side address; from inside the container the host is the network's gateway
      const value = v.replace(/@(127\.0\.0\.1|localhost):/, `@${network.gateway}:`);
      const hostValue = k === "PGHOST" && (v === "127.0.0.1" || v === "localhost") ? network.gateway : value;
      if (i === 0) env[k] = hostValue;
      if (k === "DATABASE_URL") env[`DATABASE_URL_${ref.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`] = hostValue;
    }
  }
  const size = podSizes(deps.gpuCatalogFile).find((s) => s.id === pod.size);
  if (!size) throw new RuntimeError(`unknown size ${pod.size}`, "bad_spec");
  const mounts = [];
  for (const v of pod.volumes)
    mounts.push({ source: (await deps.volumes.ensureMounted(v.volume_id)).path, target: v.path });
  return {
    name: containerName(pod.id, pod.generation),
    image: pod.image,
    command: pod.command,
    env,
    port: pod.port,
    limits: limitsOf(size),
    network: network.name,
    mounts,
    labels: {
      [LABEL_POD]: pod.id,
      [LABEL_GENERATION]: String(pod.generation),
      [LABEL_HOST]: deps.hostId,
      "platform.owner": ownerKey(owner),
    },
    pullAuth: (await deps.kernel.use("imageAccess")?.pullFor(owner, pod.image)) ?? null,
  };
}
