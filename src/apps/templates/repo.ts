import type { Checks } from "../checks/spec.js";
import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import { finderOf, listerOf } from "../../store/find.js";

/** the owner's live templates, found by id or name */
const TEMPLATES = { table: "pod_templates", refColumn: "name", where: "removed_at IS NULL" };

/** A saved pod spec; env inside `spec` is sealed (env_sealed). */
export interface TemplateRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  name: string;
  spec: TemplateSpec;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
}

export interface TemplateSpec {
  image?: string;
  port?: number | null;
  command?: string[] | null;
  env_sealed?: string;
  size?: string;
  volumes?: { volume: string; path: string }[];
  databases?: string[];
  /** issue 29: declared checks of the pods it deploys */
  checks?: Checks;
}

/** The owner's live template by id or name. */
export const findTemplate = finderOf<TemplateRow>(TEMPLATES);

export async function insertTemplate(
  q: Queryable,
  row: Pick<TemplateRow, "id" | "owner_kind" | "owner_id" | "account_id" | "name" | "spec">,
): Promise<TemplateRow> {
  const { rows } = await q.query<TemplateRow>(
    `INSERT INTO pod_templates (id, owner_kind, owner_id, account_id, name, spec)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [row.id, row.owner_kind, row.owner_id, row.account_id, row.name, JSON.stringify(row.spec)],
  );
  return rows[0]!;
}

/** The owner's live templates, oldest first; `refs` narrows them to an instance-limited key's ids and names. */
export const listTemplates = listerOf<TemplateRow>(TEMPLATES);

export async function updateTemplate(q: Queryable, id: string, name: string, spec: TemplateSpec): Promise<TemplateRow> {
  const { rows } = await q.query<TemplateRow>(
    "UPDATE pod_templates SET name = $2, spec = $3, updated_at = now() WHERE id = $1 RETURNING *",
    [id, name, JSON.stringify(spec)],
  );
  return rows[0]!;
}

export async function removeTemplate(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE pod_templates SET removed_at = now() WHERE id = $1", [id]);
}
