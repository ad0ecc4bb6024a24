import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type pg from "pg";
import type { RunAs } from "../../../pgserver/system-user.js";
import { ProviderError, type BackupInfo, type BackupKind, type BackupVerification } from "../types.js";
import { parseLsn, segmentBefore, segmentName, segmentOf } from "./wal.js";
import { copyFileHashed, copyRunningCluster, mkdirOwned, parallel, sha256File, type Manifest } from "./cluster-copy.js";

/**
 * The backup store, $DATA_DIR/backups/<id>/base/<backupId>/{backup.json, manifest.json, data/}: base backups and
 * snapshots built from an online copy of the running server (cluster-copy.ts), listed, verified and restored.
 * Also the size helpers other modules use for data directories.
 */

export function newBackupId(now = new Date()): string {
  return `${now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")}-${randomBytes(3).toString("hex")}`;
}

/**
 * Takes a base backup or snapshot into the store. Work happens in "<id>.partial" and is renamed only
 * when complete, so a kill -9 mid-backup leaves nothing that looks like a usable backup.
 */
export async function takeBackup(
  admin: pg.Client,
  srcDataDir: string,
  storeDir: string,
  walArchive: string,
  segBytes: number,
  instanceId: string,
  kind: Exclude<BackupKind, "wal">,
  label: string | null,
): Promise<BackupInfo> {
  await mkdir(storeDir, { recursive: true, mode: 0o700 });
  await removePartials(storeDir);
  const id = newBackupId();
  const partial = path.join(storeDir, `${id}.partial`);
  const final = path.join(storeDir, id);
  const copy = await copyRunningCluster(admin, srcDataDir, path.join(partial, "data"), {
    owner: null,
    label: `${kind}:${id}${label ? `:${label}` : ""}`.slice(0, 1000),
  });
  // a backup is only complete once the WAL from its start to its end is archived
  await waitForWal(
    walArchive,
    requiredWal({ startLsn: copy.startLsn, stopLsn: copy.stopLsn, timeline: copy.timeline }, segBytes),
    15 * 60_000,
  );
  const manifest: Manifest = { algorithm: "sha256", files: copy.files };
  await writeFile(path.join(partial, "manifest.json"), JSON.stringify(manifest) + "\n", { mode: 0o600 });
  const info: BackupInfo = {
    id,
    instanceId,
    kind,
    label,
    status: "complete",
    sizeBytes: copy.files.reduce((n, f) => n + f.size, 0),
    startedAt: copy.startedAt,
    finishedAt: copy.finishedAt,
    startLsn: copy.startLsn,
    stopLsn: copy.stopLsn,
    timeline: copy.timeline,
    manifestPath: path.join(final, "manifest.json"),
    path: final,
  };
  await writeFile(path.join(partial, "backup.json"), JSON.stringify(info, null, 2) + "\n", { mode: 0o600 });
  await rename(partial, final);
  return info;
}

export async function removePartials(storeDir: string): Promise<void> {
  if (!existsSync(storeDir)) return;
  for (const name of await readdir(storeDir)) {
    if (name.endsWith(".partial")) await rm(path.join(storeDir, name), { recursive: true, force: true });
  }
}

/** Complete backups, oldest first. */
export async function listStoredBackups(storeDir: string): Promise<BackupInfo[]> {
  if (!existsSync(storeDir)) return [];
  const out: BackupInfo[] = [];
  for (const name of await readdir(storeDir)) {
    if (name.endsWith(".partial")) continue;
    const meta = path.join(storeDir, name, "backup.json");
    if (!existsSync(meta)) continue;
    out.push(JSON.parse(await readFile(meta, "utf8")) as BackupInfo);
  }
  return out.sort((a, b) => a.finishedAt.localeCompare(b.finishedAt) || a.id.localeCompare(b.id));
}

export async function findBackup(storeDir: string, backupId: string): Promise<BackupInfo> {
  if (!/^[0-9A-Za-z-]+$/.test(backupId)) throw new ProviderError("backup_not_found", `no backup ${backupId}`);
  const meta = path.join(storeDir, backupId, "backup.json");
  if (!existsSync(meta)) throw new ProviderError("backup_not_found", `no backup ${backupId}`);
  return JSON.parse(await readFile(meta, "utf8")) as BackupInfo;
}

/** WAL segments (by name) a backup needs to reach consistency: start segment through stop segment. */
export function requiredWal(info: Pick<BackupInfo, "startLsn" | "stopLsn" | "timeline">, segBytes: number): string[] {
  const first = segmentOf(parseLsn(info.startLsn), segBytes);
  const last = segmentBefore(parseLsn(info.stopLsn), segBytes);
  const names: string[] = [];
  for (let s = first; s <= last; s++) names.push(segmentName(info.timeline, s, segBytes));
  return names;
}

/** Waits (polling, bounded) until every named segment is in the archive; a failing archive_command surfaces here. */
export async function waitForWal(walArchive: string, names: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let pending = names;
  while ((pending = pending.filter((n) => !existsSync(path.join(walArchive, n)))).length) {
    if (Date.now() > deadline) {
      throw new ProviderError(
        "backup_failed",
        `WAL ${pending[0]} needed by the backup never reached the archive; check WAL archiving`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Re-reads every file of a backup and compares it with the manifest written when it was taken. */
export async function verifyStoredBackup(
  info: BackupInfo,
  walArchive: string,
  segBytes: number,
): Promise<BackupVerification> {
  const manifest = JSON.parse(await readFile(path.join(info.path, "manifest.json"), "utf8")) as Manifest;
  const dataDir = path.join(info.path, "data");
  const mismatched: string[] = [];
  const missing: string[] = [];
  const expected = new Set(manifest.files.map((f) => f.path));
  await parallel(manifest.files, async (entry) => {
    const file = path.join(dataDir, entry.path);
    if (!existsSync(file)) {
      missing.push(entry.path);
      return;
    }
    const actual = await sha256File(file);
    if (actual.sha256 !== entry.sha256 || actual.size !== entry.size) mismatched.push(entry.path);
  });
  mismatched.sort();
  missing.sort();
  const unexpected = (await listFiles(dataDir)).filter((f) => !expected.has(f));
  const missingWal = requiredWal(info, segBytes).filter((name) => !existsSync(path.join(walArchive, name)));
  return {
    backupId: info.id,
    ok: !mismatched.length && !missing.length && !unexpected.length && !missingWal.length,
    checkedFiles: manifest.files.length,
    mismatched,
    missing,
    unexpected,
    missingWal,
  };
}

async function listFiles(root: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(root, child)));
    else out.push(child);
  }
  return out;
}

/**
 * Restores a stored backup into an empty data directory, checking every file against the manifest
 * on the way: a corrupted backup is refused rather than started.
 */
export async function restoreBackupFiles(info: BackupInfo, dest: string, owner: RunAs | null): Promise<void> {
  const manifest = JSON.parse(await readFile(path.join(info.path, "manifest.json"), "utf8")) as Manifest;
  const src = path.join(info.path, "data");
  await rm(dest, { recursive: true, force: true });
  await mkdirOwned(dest, owner);
  await chmod(dest, 0o700);
  // directories first (including the empty ones the backup kept on purpose)
  for (const dir of await listDirs(src)) await mkdirOwned(path.join(dest, dir), owner);
  const bad: string[] = [];
  await parallel(manifest.files, async (entry) => {
    const copied = await copyFileHashed(path.join(src, entry.path), path.join(dest, entry.path), owner);
    if (!copied || copied.sha256 !== entry.sha256) bad.push(entry.path);
  });
  if (bad.length) {
    await rm(dest, { recursive: true, force: true });
    throw new ProviderError(
      "backup_corrupt",
      `backup ${info.id} is damaged (${bad.length} file(s) differ from its checksums, e.g. ${bad[0]}); choose another backup`,
      { files: bad },
    );
  }
}

async function listDirs(root: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, rel), { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const child = rel ? `${rel}/${e.name}` : e.name;
    out.push(child, ...(await listDirs(root, child)));
  }
  return out;
}

/** Bytes under a directory (apparent sizes, like du --apparent-size); vanished files are skipped. */
export async function directorySize(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await directorySize(p);
    else if (e.isFile())
      total += await lstat(p).then(
        (s) => s.size,
        () => 0,
      );
  }
  return total;
}

export async function fileSize(file: string): Promise<number> {
  return stat(file).then(
    (s) => s.size,
    () => 0,
  );
}
