import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { ApiError } from "../../http/errors.js";
import { openEnv } from "../container-spec.js";
import type { PodInput } from "../types.js";
import { findTemplate } from "./repo.js";

/**
 * `POST /v1/pods {template}`: the template's saved spec, with every field the request gives overriding it
 * (env merged key by key, the request's keys winning). The name defaults to the template's.
 */
export async function expandTemplate(
  q: Queryable,
  secrets: SecretBox,
  owner: Owner,
  ref: string,
  given: PodInput,
): Promise<PodInput & { template_id: string }> {
  const t = await findTemplate(q, owner, ref);
  if (!t) throw new ApiError("not_found", `No pod template "${ref}" for this account.`);
  const s = t.spec;
  const savedEnv = s.env_sealed ? openEnv(secrets, s.env_sealed) : {};
  return {
    name: given.name ?? t.name,
    slug: given.slug,
    image: given.image ?? s.image,
    port: given.port !== undefined ? given.port : s.port,
    command: given.command !== undefined ? given.command : s.command,
    env: { ...savedEnv, ...(given.env ?? {}) },
    size: given.size ?? s.size,
    volumes: given.volumes ?? s.volumes,
    databases: given.databases ?? s.databases,
    checks: given.checks !== undefined ? given.checks : (s.checks ?? null),
    template: ref,
    template_id: t.id,
  };
}
