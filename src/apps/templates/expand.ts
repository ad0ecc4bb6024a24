import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { ApiError } from "../../http/errors.js";
import { readEnvDoc } from "../secrets/env.js";
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
  const saved = readEnvDoc(secrets, s.env_sealed);
  // the request's names win: one it gives (plain or secret) replaces the template's secret of that name
  const given_names = [...Object.keys(given.env ?? {}), ...Object.keys(given.secret_env ?? {})];
  const inherited = { secret: { ...saved.secret }, meta: { ...saved.meta } };
  for (const k of given_names) {
    delete inherited.secret[k];
    delete inherited.meta[k];
  }
  return {
    name: given.name ?? t.name,
    slug: given.slug,
    image: given.image ?? s.image,
    port: given.port !== undefined ? given.port : s.port,
    command: given.command !== undefined ? given.command : s.command,
    env: Object.fromEntries(
      Object.entries({ ...saved.plain, ...(given.env ?? {}) }).filter(([k]) => !(k in (given.secret_env ?? {}))),
    ),
    secret_env: given.secret_env,
    inherited_secrets: inherited,
    size: given.size ?? s.size,
    volumes: given.volumes ?? s.volumes,
    databases: given.databases ?? s.databases,
    checks: given.checks !== undefined ? given.checks : (s.checks ?? null),
    template: ref,
    template_id: t.id,
  };
}
