import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pgBinaries } from "../../../pgserver/binaries.js";
import {
  initCluster,
  ownedDir,
  startCluster,
  stopCluster,
  writePlatformConf,
  type Cluster,
} from "../../../pgserver/cluster.js";
import type { RunAs } from "../../../pgserver/system-user.js";
import type { PgMajor } from "../types.js";
import { ident, withAdmin } from "./admin.js";
import { DEFAULT_EXTENSIONS } from "./extensions.js";
import {
  ADMIN_ROLE,
  CUSTOMER_SUPERUSER,
  CUSTOMER_SUPERUSER_ATTRS,
  CUSTOMER_SUPERUSER_GRANTS,
  REPLICATION_ROLE,
  generatePassword,
} from "./record.js";
import { ensureCertificate } from "./tls.js";

/**
 * The customer database of a prepared spare, renamed to the customer's name when it is claimed. Customer database
 * names never start with pg_ (validateSpec), so it cannot be taken for one.
 */
export const SPARE_DATABASE = "pg_platform_spare";
/** the certificate of an instance without host names (CN localhost), made with the spare */
export const SPARE_TLS_DIR = "tls";

const PASSWORD_FILE = "admin-password";
const STALE_TMP_MS = 10 * 60_000;

/**
 * A warm pool of initialised, never-started data directories per PostgreSQL major ($DATA_DIR/spares/<major>/<uuid>/).
 * initdb is most of the cost of a new instance, so it is done ahead of time: provisioning claims a
 * spare by renaming it into the instance (atomic, so each spare is taken exactly once, also across
 * processes) and a replacement is prepared in the background. Each spare is its own initdb, with its
 * own system identifier and its own admin password (kept beside it until claimed).
 *
 * A spare is prepared as far as anything that does not depend on the customer goes, so that a creation is a claim,
 * a start and one round trip: it was started once on a private socket (no TCP), given the platform's roles (the
 * customer's superuser with its grants, the replication role; no passwords yet), a database `SPARE_DATABASE` with
 * the default extensions, then stopped cleanly; beside its data lies a TLS certificate for an instance without
 * host names. Provisioning renames the database, creates the owner and sets the passwords (lifecycle.ts).
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
    if (await this.take(version, dest)) return true;
    // none ready, but this process is building one: it started earlier than an initdb started now would
    const building = this.refilling.get(version);
    if (!building) return false;
    await building;
    return this.take(version, dest);
  }

  private async take(version: PgMajor, dest: string): Promise<boolean> {
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
        logFile: path.join(tmp, "log", "prepare.log"),
        runAs: this.runAs,
      };
      try {
        await initCluster(cluster, { superuser: ADMIN_ROLE, password });
        await prepare(cluster, password);
        await ensureCertificate(path.join(tmp, SPARE_TLS_DIR), "localhost", [], this.runAs);
        await writeFile(path.join(tmp, PASSWORD_FILE), password + "\n", { mode: 0o600 });
        await rename(tmp, path.join(dir, id));
      } catch (err) {
        await rm(tmp, { recursive: true, force: true });
        throw err;
      }
    }
  }
}

/**
 * Starts a fresh spare once, on a private socket directory without TCP, to give it what every instance has
 * whoever its customer is (roles without passwords, the database with the default extensions), then stops it
 * cleanly and empties platform.conf again (provisioning writes the instance's own).
 */
async function prepare(cluster: Cluster, password: string): Promise<void> {
  const socketDir = await mkdtemp(path.join(os.tmpdir(), "pgspare-"));
  try {
    await ownedDir(socketDir, cluster.runAs);
    const port = 5432; // alone in its socket directory, no TCP: no clash with anything
    await writePlatformConf(cluster, {
      listen_addresses: "",
      port,
      unix_socket_directories: socketDir,
      max_connections: 10,
      shared_buffers: "16MB",
    });
    await startCluster(cluster, 120);
    try {
      await withAdmin({ socketDir, port, password }, async (c) => {
        await c.query(
          `CREATE ROLE ${ident(CUSTOMER_SUPERUSER)} WITH ${CUSTOMER_SUPERUSER_ATTRS};
           GRANT ${CUSTOMER_SUPERUSER_GRANTS.join(", ")} TO ${ident(CUSTOMER_SUPERUSER)};
           CREATE ROLE ${ident(REPLICATION_ROLE)} WITH REPLICATION LOGIN;`,
        );
        await c.query(`CREATE DATABASE ${ident(SPARE_DATABASE)}`);
      });
      await withAdmin({ socketDir, port, password, database: SPARE_DATABASE }, async (c) => {
        for (const name of DEFAULT_EXTENSIONS) await c.query(`CREATE EXTENSION IF NOT EXISTS ${ident(name)}`);
      });
    } finally {
      await stopCluster(cluster, "fast");
    }
    await writePlatformConf(cluster, {});
  } finally {
    await rm(socketDir, { recursive: true, force: true });
  }
}
