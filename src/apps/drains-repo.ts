import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { maskSecrets, type SecretBox } from "../kernel/secrets.js";
import { readEnvDoc } from "./secrets/env.js";

/** A pod on a host whose output log drains may ship (src/drains): who owns it, its group, its sealed env. */
export interface PodLogSource {
  id: string;
  slug: string;
  groupId: string | null;
  owner: Owner;
  envSealed: string;
}

/** The pods placed on a host and not removed, of the given owners (`owner_kind:owner_id`). */
export async function podsForDrains(q: Queryable, hostId: string, owners: string[]): Promise<PodLogSource[]> {
  if (!owners.length) return [];
  const { rows } = await q.query<{
    id: string;
    slug: string;
    group_id: string | null;
    owner_kind: Owner["kind"];
    owner_id: string;
    env_sealed: string;
  }>(
    `SELECT id::text, slug, group_id::text, owner_kind, owner_id::text, env_sealed FROM pods
      WHERE host_id = $1 AND removed_at IS NULL AND desired_state <> 'removed'
        AND owner_kind || ':' || owner_id::text = ANY($2::text[])
      ORDER BY id`,
    [hostId, owners],
  );
  return rows.map((r) => ({
    id: r.id,
    slug: r.slug,
    groupId: r.group_id,
    owner: { kind: r.owner_kind, id: r.owner_id },
    envSealed: r.env_sealed,
  }));
}

/** Masks the pod's secret env values in its output, as `GET /v1/pods/{id}/logs` does. */
export function podLogMasker(box: SecretBox, envSealed: string): (text: string) => string {
  const secret = readEnvDoc(box, envSealed).secret;
  return Object.keys(secret).length ? (text) => maskSecrets(text, secret) : (text) => text;
}
