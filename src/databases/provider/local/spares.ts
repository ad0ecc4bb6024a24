import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { pgBinaries } from "../../../pgserver/binaries.js";
import { initCluster, type Cluster } from "../../../pgserver/cluster.js";
import type { RunAs } from "../../../pgserver/system-user.js";
import type { PgMajor } from "../types.js";
import { ADMIN_ROLE, generatePassword } from "./record.js";

const PASSWORD_FILE = "admin-password";
const STALE_TMP_MS = 10 * 60_000;

/**
 * A warm pool of initialised, never-started data directories per PostgreSQL major ($DATA_DIR/spares/<major>/<uuid>/).
 * initdb is most of the cost of a new instance, so it is done ahead of time: provisioning claims a
 * spare by renaming it into the instance (atomic, so each spare is taken exactly once, also across
 * processes) and a replacement is prepared in the background. Each spare is its own initdb, with its
 * own system identifier and its own admin password (kept beside it until claimed).
 */
export class SparePool {
  private readonly refilling = new Map<number, Promise<void>>();

  constructor(
    private readonly root: string,
    private readonly runAs: RunAs | null,
    private readonly perVersion: number,
  ) {}

  private dir(version: PgMajor): string {
    return path.join(this.root, "spares", String(version));
  }

  /**
   * Moves a ready spare to `dest` (a directory holding `data/` and the admin password), or returns
   * false when none is ready. `dest` must be on the same filesystem and not exist.
   */
  async claim(version: PgMajor, dest: string): Promise<boolean> {
    if (this.perVersion <= 0) return false;
    const dir = this.dir(version);
    if (!existsSync(dir)) return false;
    for (const name of await readdir(dir)) {
      if (name.includes(".tmp")) continue;
      try {
        await rename(path.join(dir, name), dest);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue; // taken by another process
        throw err;
      }
    }
    return false;
  }

  /** The admin password a claimed spare was initialised with. */
  static async passwordOf(claimed: string): Promise<string> {
    return (await readFile(path.join(claimed, PASSWORD_FILE), "utf8")).trim();
  }

  /** Tops the pool up in the background (one builder per version in this process); failures only mean a slower next creation. */
  refill(version: PgMajor): void {
    if (this.perVersion <= 0 || this.refilling.has(version)) return;
    const job = this.fill(version)
      .catch(() => {})
      .finally(() => this.refilling.delete(version));
    this.refilling.set(version, job);
  }

  /** Resolves once background work of this process is over (tests and shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.refilling.values()]);
  }

  private async fill(version: PgMajor): Promise<void> {
    const dir = this.dir(version);
    await mkdir(dir, { recursive: true });
    await chmod(path.join(this.root, "spares"), 0o711);
    await chmod(dir, 0o711);
    for (;;) {
      const entries = await readdir(dir);
      for (const name of entries.filter((n) => n.includes(".tmp"))) {
        // a builder killed mid-way leaves its temp directory; live builders finish well within this
        const st = await stat(path.join(dir, name)).catch(() => null);
        if (st && Date.now() - st.mtimeMs > STALE_TMP_MS)
          await rm(path.join(dir, name), { recursive: true, force: true });
      }
      if (entries.filter((n) => !n.includes(".tmp")).length >= this.perVersion) return;
      const id = randomUUID();
      const tmp = path.join(dir, `${id}.tmp-${process.pid}`);
      const password = generatePassword();
      const cluster: Cluster = {
        bins: pgBinaries(version),
        dataDir: path.join(tmp, "data"),
        logFile: path.join(tmp, "unused.log"),
        runAs: this.runAs,
      };
      try {
        await initCluster(cluster, { superuser: ADMIN_ROLE, password });
        await writeFile(path.join(tmp, PASSWORD_FILE), password + "\n", { mode: 0o600 });
        await rename(tmp, path.join(dir, id));
      } catch (err) {
        await rm(tmp, { recursive: true, force: true });
        throw err;
      }
    }
  }
}
