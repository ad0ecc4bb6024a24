import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";

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
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function findTemplate(q: Queryable, owner: Owner, ref: string): Promise<TemplateRow | null> {
  const { rows } = await q.query<TemplateRow>(
    `SELECT * FROM pod_templates WHERE owner_kind = $1 AND owner_id = $2 AND ${UUID.test(ref) ? "id = $3::uuid" : "name = $3"}
        AND removed_at IS NULL`,
    [owner.kind, owner.id, ref],
  );
  return rows[0] ?? null;
}
