import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { chmod, chown, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type pg from "pg";
import type { RunAs } from "../../../pgserver/system-user.js";

/**
 * Online physical copies of a running server with the server's own low-level API
 * (pg_backup_start / file copy / pg_backup_stop), because the shipped binaries have no pg_basebackup.
 * The same copy builds standbys, snapshots and daily base backups.
 */

/** Directories whose contents are rebuilt by the server at start and must not be copied (PostgreSQL docs, "Backing Up the Data Directory"). */
export const EMPTY_DIRS = new Set([
  "pg_wal",
  "pg_replslot",
  "pg_dynshmem",
  "pg_notify",
  "pg_serial",
  "pg_snapshots",
  "pg_stat_tmp",
  "pg_subtrans",
]);
/** Top-level files that describe the running server rather than the data, or that we write ourselves. */
export const SKIP_TOP_FILES = new Set([
  "postmaster.pid",
  "postmaster.opts",
  "backup_label",
  "backup_label.old",
  "tablespace_map",
  "tablespace_map.old",
  "standby.signal",
  "recovery.signal",
  "current_logfiles",
  "backup_manifest",
]);

export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  algorithm: "sha256";
  files: ManifestEntry[];
}

export interface CopyResult {
  startLsn: string;
  stopLsn: string;
  timeline: number;
  labelFile: string;
  files: ManifestEntry[];
  startedAt: string;
  finishedAt: string;
}

interface CopyOptions {
  /** chown every copied file to the server user (when building a data directory a server will run). */
  owner: RunAs | null;
  label: string;
}

/**
 * Copies the data directory of the server behind `admin` into `dest` while a backup is open on that
 * very session (closing the session would abort it). Torn pages copied mid-write are repaired by the
 * full-page images in WAL replayed from startLsn.
 */
export async function copyRunningCluster(
  admin: pg.Client,
  srcDataDir: string,
  dest: string,
  opts: CopyOptions,
): Promise<CopyResult> {
  const startedAt = new Date().toISOString();
  const start = await admin.query<{ lsn: string }>("SELECT pg_backup_start($1, true)::text AS lsn", [opts.label]);
  let stopped = false;
  try {
    await mkdir(dest, { recursive: true, mode: 0o700 });
    await chmod(dest, 0o700);
    if (opts.owner) await chown(dest, opts.owner.uid, opts.owner.gid);
    const files: ManifestEntry[] = [];
    await copyTree(srcDataDir, dest, files, opts.owner);
    // not wait_for_archive: the server polls in 1 s steps; callers that need the WAL wait for it themselves
    const stop = await admin.query<{ lsn: string; labelfile: string; spcmapfile: string }>(
      "SELECT lsn::text AS lsn, labelfile, spcmapfile FROM pg_backup_stop(false)",
    );
    stopped = true;
    const { lsn, labelfile, spcmapfile } = stop.rows[0];
    // written byte for byte: recovery starts from the checkpoint named in backup_label, not from pg_control
    files.push(await writeDataFile(dest, "backup_label", labelfile, opts.owner));
    if (spcmapfile) files.push(await writeDataFile(dest, "tablespace_map", spcmapfile, opts.owner));
    const tli = /START TIMELINE: (\d+)/.exec(labelfile);
    return {
      startLsn: start.rows[0].lsn,
      stopLsn: lsn,
      timeline: tli ? Number(tli[1]) : 1,
      labelFile: labelfile,
      files: files.sort((a, b) => a.path.localeCompare(b.path)),
      startedAt,
      finishedAt: new Date().toISOString(),
    };
  } finally {
    // leave no backup open on a session that survives (the server ends it anyway when the session closes)
    if (!stopped) await admin.query("SELECT pg_backup_stop(false)").catch(() => {});
  }
}

/** Copies the files of a data directory (as laid out by layOutCopy) with a sha256 of each into the manifest. */
async function copyTree(srcRoot: string, destRoot: string, out: ManifestEntry[], owner: RunAs | null): Promise<void> {
  const files = await layOutCopy(srcRoot, destRoot, owner);
  await parallel(files, async (f) => {
    const entry = await copyFileHashed(path.join(srcRoot, f), path.join(destRoot, f), owner);
    if (entry) out.push({ ...entry, path: f });
  });
}

/**
 * What a copy of a data directory takes, for every copy of one (a backup, a branch's clone): makes its directories
 * in `dest` (those the server rebuilds left empty) and answers the files to copy (paths relative to `src`), without
 * those that describe the running server rather than the data. Symlinks (tablespaces) are not offered by the
 * platform and are not copied.
 */
export async function layOutCopy(src: string, dest: string, owner: RunAs | null): Promise<string[]> {
  const files: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(src, rel), { withFileTypes: true }).catch((err) => {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return []; // dropped while copying
      throw err;
    });
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        await mkdirOwned(path.join(dest, child), owner);
        if (rel === "" && EMPTY_DIRS.has(e.name)) {
          if (e.name === "pg_wal") await mkdirOwned(path.join(dest, "pg_wal", "archive_status"), owner);
          continue;
        }
        await walk(child);
      } else if (e.isFile()) {
        if (rel === "" && SKIP_TOP_FILES.has(e.name)) continue;
        if (e.name === "pg_internal.init" || e.name.startsWith("pgsql_tmp")) continue;
        files.push(child);
      }
    }
  };
  await walk("");
  return files;
}

export async function mkdirOwned(dir: string, owner: RunAs | null): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (owner) await chown(dir, owner.uid, owner.gid);
}

/** Files up to this size are copied as one buffer: per-file stream overhead dominates a data directory of small files. */
const WHOLE_FILE_MAX = 8 * 2 ** 20;
const WORKERS = 8;

/** One read of the source feeds both the copy and its sha256; null when the file vanished meanwhile. */
export async function copyFileHashed(
  src: string,
  dst: string,
  owner: RunAs | null,
): Promise<Omit<ManifestEntry, "path"> | null> {
  try {
    const st = await stat(src);
    let result: Omit<ManifestEntry, "path">;
    if (st.size <= WHOLE_FILE_MAX) {
      const buf = await readFile(src);
      await writeFile(dst, buf, { mode: 0o600 });
      result = { size: buf.length, sha256: createHash("sha256").update(buf).digest("hex") };
    } else {
      result = await streamCopyHashed(src, dst);
    }
    if (owner) await chown(dst, owner.uid, owner.gid);
    return result;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && !existsSync(src)) {
      await rm(dst, { force: true }); // relation dropped during the copy: WAL replay recreates the state
      return null;
    }
    throw err;
  }
}

async function streamCopyHashed(src: string, dst: string): Promise<Omit<ManifestEntry, "path">> {
  const hash = createHash("sha256");
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      size += chunk.length;
      cb(null, chunk);
    },
  });
  await pipeline(createReadStream(src, { highWaterMark: 1 << 20 }), tap, createWriteStream(dst, { mode: 0o600 }));
  return { size, sha256: hash.digest("hex") };
}

/** Runs `fn` over items with a few in flight at once. */
export async function parallel<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(WORKERS, items.length) }, worker));
}

async function writeDataFile(dest: string, name: string, text: string, owner: RunAs | null): Promise<ManifestEntry> {
  const buf = Buffer.from(text, "utf8");
  const file = path.join(dest, name);
  await writeFile(file, buf, { mode: 0o600 });
  if (owner) await chown(file, owner.uid, owner.gid);
  return { path: name, size: buf.length, sha256: createHash("sha256").update(buf).digest("hex") };
}

export async function sha256File(file: string): Promise<{ size: number; sha256: string }> {
  const st = await stat(file);
  if (st.size <= WHOLE_FILE_MAX) {
    const buf = await readFile(file);
    return { size: buf.length, sha256: createHash("sha256").update(buf).digest("hex") };
  }
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest("hex") };
}
