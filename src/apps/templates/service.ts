import { randomUUID } from "node:crypto";
import { ownerColumnsOf } from "../../kernel/owner.js";
import { isUniqueViolation, type Db } from "../../store/db.js";
import { ApiError, found } from "../../http/errors.js";
import type { InstanceFilter, Principal } from "../../auth/principal.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { auditedTransaction } from "../../audit/record.js";
import { applyEnvChange, readEnvDoc, sealEnvDoc, setterOf } from "../secrets/env.js";
import { podSizes } from "../sizes.js";
import { validateChecks, type Checks } from "../checks/spec.js";
import type { VolumeRef } from "../volumes/attach.js";
import { findVolume } from "../volumes/repo.js";
import * as repo from "./repo.js";

export interface TemplatesDeps {
  db: Db;
  secrets: SecretBox;
  kernel: Pick<Kernel, "use" | "findInstance">;
  gpuCatalogFile: string;
}

/** What POST and PATCH give: every field optional but the name at creation; null clears a field on PATCH. */
export interface TemplateFields {
  name?: string;
  image?: string | null;
  port?: number | null;
  command?: string[] | null;
  env?: Record<string, string>;
  secret_env?: Record<string, string | null>;
  size?: string | null;
  volumes?: VolumeRef[];
  databases?: string[];
  checks?: Checks | null;
}

/**
 * Pod templates: saved pod specs (`POST /v1/pods {template}` deploys one, src/apps/templates/expand.ts).
 * A template may leave any field to the request; what it holds is checked as POST /v1/pods checks it (a
 * known size, an image the owner may run, volumes and databases the owner has). Volumes and databases are kept as
 * the names given and resolved again at each deploy (a database still being provisioned is accepted here, as it
 * will be there by then). env is sealed at rest and shown to the owner.
 */
export function templatesService(deps: TemplatesDeps) {
  const { db, secrets, kernel } = deps;

  /** what POST /v1/pods would refuse is refused here (before any transaction: the registry may be asked) */
  async function check(p: Principal, f: TemplateFields): Promise<void> {
    if (f.checks && typeof f.port === "number") validateChecks(f.checks, f.port);
    if (typeof f.size === "string" && !podSizes(deps.gpuCatalogFile).some((s) => s.id === f.size)) {
      const known = podSizes(deps.gpuCatalogFile).map((s) => s.id);
      throw new ApiError("bad_size", `Unknown pod size "${f.size}"; sizes: ${known.join(", ")}.`);
    }
    if (typeof f.image === "string") await kernel.use("imageAccess")?.pullFor(p.owner, f.image);
    // a reference the owner cannot use is refused when it is written, not at the deploy that needs it
    for (const ref of f.databases ?? [])
      if (!(await kernel.findInstance("databases", p.owner, ref)))
        throw new ApiError("not_found", `No database "${ref}" for this account to attach.`);
    for (const v of f.volumes ?? [])
      if (!(await findVolume(db, p.owner, v.volume)))
        throw new ApiError("not_found", `No volume "${v.volume}" for this account.`);
  }

  /** the saved spec with the given fields applied (null removes a field, leaving it to each deploy) */
  function applyFields(base: repo.TemplateSpec, f: TemplateFields, setBy: string): repo.TemplateSpec {
    const spec: repo.TemplateSpec = { ...base };
    const set = <K extends keyof repo.TemplateSpec>(key: K, value: repo.TemplateSpec[K] | null | undefined) => {
      if (value === undefined) return;
      if (value === null) delete spec[key];
      else spec[key] = value;
    };
    set("image", f.image);
    set("port", f.port);
    set("command", f.command);
    set("size", f.size);
    set("volumes", f.volumes);
    set("databases", f.databases);
    set("checks", f.checks);
    if (f.env !== undefined || f.secret_env !== undefined)
      spec.env_sealed = sealEnvDoc(secrets, applyEnvChange(secrets, readEnvDoc(secrets, base.env_sealed), f, setBy));
    return spec;
  }

  const taken = (err: unknown, name: string | undefined) =>
    isUniqueViolation(err, "pod_templates_name_live")
      ? new ApiError("slug_taken", `A pod template named "${name}" exists already.`)
      : err;

  async function create(p: Principal, f: TemplateFields & { name: string }): Promise<repo.TemplateRow> {
    await check(p, f);
    const spec = applyFields({}, f, setterOf(p));
    try {
      return await auditedTransaction(db, p, (tx) =>
        repo.insertTemplate(tx, {
          id: randomUUID(),
          ...ownerColumnsOf(p),
          name: f.name,
          spec,
        }),
      );
    } catch (err) {
      throw taken(err, f.name);
    }
  }

  const list = (p: Principal, filter: InstanceFilter) => repo.listTemplates(db, p.owner, filter);

  async function get(p: Principal, ref: string): Promise<repo.TemplateRow> {
    return found(await repo.findTemplate(db, p.owner, ref), "pod template");
  }

  /** replaces the given fields; deploys made from the template before keep what they were given */
  async function update(p: Principal, ref: string, f: TemplateFields): Promise<repo.TemplateRow> {
    await check(p, f);
    try {
      return await auditedTransaction(db, p, async (tx) => {
        const cur = found(await repo.findTemplate(tx, p.owner, ref, { forUpdate: true }), "pod template");
        const spec = applyFields(cur.spec, f, setterOf(p));
        return repo.updateTemplate(tx, cur.id, f.name ?? cur.name, spec);
      });
    } catch (err) {
      throw taken(err, f.name);
    }
  }

  async function remove(p: Principal, ref: string): Promise<void> {
    await auditedTransaction(db, p, async (tx) => {
      const cur = found(await repo.findTemplate(tx, p.owner, ref, { forUpdate: true }), "pod template");
      await repo.removeTemplate(tx, cur.id);
    });
  }

  const envOf = (t: repo.TemplateRow): Record<string, string> => readEnvDoc(secrets, t.spec.env_sealed).plain;
  const secretEnvOf = (t: repo.TemplateRow) => readEnvDoc(secrets, t.spec.env_sealed).meta;

  return { create, list, get, update, remove, envOf, secretEnvOf };
}

export type TemplatesService = ReturnType<typeof templatesService>;
