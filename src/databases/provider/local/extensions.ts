import { existsSync } from "node:fs";
import path from "node:path";
import { pgBinaries } from "../../../pgserver/binaries.js";
import { ProviderError } from "../types.js";
import { ident } from "./admin.js";
import type { InstanceContext } from "./context.js";

/** Installed in every customer database. */
export const DEFAULT_EXTENSIONS = ["pgcrypto", "uuid-ossp"];

/**
 * Extensions customers may add: contrib modules that neither reach outside the server
 * (postgres_fdw, dblink, file_fdw, untrusted languages) nor inspect raw storage (pageinspect, pg_surgery…).
 */
export const ALLOWED_EXTENSIONS = new Set([
  ...DEFAULT_EXTENSIONS,
  "citext",
  "pg_trgm",
  "hstore",
  "btree_gin",
  "btree_gist",
  "cube",
  "earthdistance",
  "fuzzystrmatch",
  "intarray",
  "isn",
  "lo",
  "ltree",
  "seg",
  "tablefunc",
  "unaccent",
  "tsm_system_rows",
  "tsm_system_time",
  "bloom",
  "dict_int",
  "pg_stat_statements",
  "amcheck",
  "pgrowlocks",
  "pgstattuple",
]);

/** Need a preloaded library and server-wide memory: only for dedicated (non-shared) sizes. */
export const DEDICATED_ONLY = new Set(["pg_stat_statements"]);

/** Throws extension_not_allowed listing every unknown or refused name at once. */
export function checkExtensions(names: string[], shared: boolean, shareDir: string): string[] {
  const unknown: string[] = [];
  const disallowed: string[] = [];
  const wanted = [...new Set(names.map((n) => n.trim()))];
  for (const name of wanted) {
    const known = /^[a-z0-9_-]{1,63}$/.test(name) && existsSync(path.join(shareDir, "extension", `${name}.control`));
    if (!known) unknown.push(name);
    else if (!ALLOWED_EXTENSIONS.has(name) || (shared && DEDICATED_ONLY.has(name))) disallowed.push(name);
  }
  if (unknown.length || disallowed.length) {
    const parts = [
      unknown.length ? `unknown extension(s): ${unknown.join(", ")}` : "",
      disallowed.length ? `not allowed${shared ? " on a shared (dev) instance" : ""}: ${disallowed.join(", ")}` : "",
    ].filter(Boolean);
    throw new ProviderError("extension_not_allowed", parts.join("; "), { unknown, disallowed });
  }
  return wanted;
}

/** Where a PostgreSQL major keeps its extension control files. */
export function shareDir(version: number): string {
  return path.join(pgBinaries(version).binDir, "..", "share", "postgresql");
}

/** Creates what is missing in the customer's database; returns every extension installed there. */
export async function installExtensions(ctx: InstanceContext, names: string[]): Promise<string[]> {
  return ctx.withPrimary(async (c) => {
    for (const name of names) await c.query(`CREATE EXTENSION IF NOT EXISTS ${ident(name)}`);
    return (await c.query<{ extname: string }>("SELECT extname FROM pg_extension ORDER BY extname")).rows.map(
      (r) => r.extname,
    );
  }, ctx.record.database);
}
