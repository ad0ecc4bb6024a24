import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inTransaction, type Db } from "./db.js";

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");
// any constant works; it only has to be the same in every API process
const MIGRATION_LOCK_KEY = 7_312_001;

/**
 * Applies numbered SQL files not yet recorded, all in one transaction under an advisory lock,
 * so two API processes starting together apply each file exactly once.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return inTransaction(db, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set(
      (await client.query<{ version: string }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version),
    );
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await client.query(await readFile(path.join(MIGRATIONS_DIR, file), "utf8"));
      await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [file]);
      applied.push(file);
    }
    return applied;
  });
}
