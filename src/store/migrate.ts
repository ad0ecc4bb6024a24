import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inTransaction, type Db } from "./db.js";

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");
// any constant works; it only has to be the same in every API process
const MIGRATION_LOCK_KEY = 7_312_001;
const MIGRATION_FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;

/** An area with a folder of its own migrations (`migrations` on its module). */
export interface MigrationSource {
  name: string;
  migrations?: string;
}

interface Migration {
  file: string;
  dir: string;
  owner: string;
}

/**
 * The numbered SQL files of src/store/migrations and of every area's own folder, in number order. Two files
 * with one number stop start-up, naming both: the order between them would be a guess.
 */
export async function collectMigrations(areas: readonly MigrationSource[] = []): Promise<Migration[]> {
  const sources = [{ owner: "src/store/migrations", dir: MIGRATIONS_DIR }];
  for (const a of areas) if (a.migrations) sources.push({ owner: `the ${a.name} area`, dir: a.migrations });
  const byNumber = new Map<string, Migration>();
  for (const { owner, dir } of sources) {
    for (const file of await readdir(dir)) {
      const number = MIGRATION_FILE.exec(file)?.[1];
      if (!number) continue;
      const other = byNumber.get(number);
      if (other)
        throw new Error(
          `migration number ${number} is used twice: ${other.file} (${other.owner}) and ${file} (${owner})`,
        );
      byNumber.set(number, { file, dir, owner });
    }
  }
  return [...byNumber.values()].sort((a, b) => (a.file < b.file ? -1 : 1));
}

/**
 * Applies numbered SQL files not yet recorded (src/store/migrations plus each given area's folder; pass the areas
 * list, src/areas.ts), all in one transaction under an advisory lock, so two API processes starting together apply
 * each file exactly once. Files are recorded by name, wherever they live.
 */
export async function migrate(db: Db, areas: readonly MigrationSource[] = []): Promise<string[]> {
  const migrations = await collectMigrations(areas);
  return inTransaction(db, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set(
      (await client.query<{ version: string }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version),
    );
    const applied: string[] = [];
    for (const { file, dir } of migrations) {
      if (done.has(file)) continue;
      await client.query(await readFile(path.join(dir, file), "utf8"));
      await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [file]);
      applied.push(file);
    }
    return applied;
  });
}
