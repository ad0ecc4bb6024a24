import { constants, existsSync } from "node:fs";
import { chown, copyFile, readdir, rm } from "node:fs/promises";
import path from "node:path";
import type pg from "pg";
import { isRunning, startCluster, stopCluster } from "../../../pgserver/cluster.js";
import type { RunAs } from "../../../pgserver/system-user.js";
import { ProviderError, type BranchRequest, type BranchResult } from "../types.js";
import { ident, literal } from "./admin.js";
import { listStoredBackups, requiredWal } from "./backup.js";
import { layOutCopy, mkdirOwned, parallel } from "./cluster-copy.js";
import type { InstanceContext } from "./context.js";
import { writeOwnedFile } from "./exec.js";
import type { ProviderHost } from "./host.js";
import { stopAll } from "./lifecycle.js";
import { chooseBackup, recoverInto, TargetBeyondWal } from "./pitr.js";
import { startPoolFor } from "./pooling.js";
import { CUSTOMER_SUPERUSER, saveSecrets } from "./record.js";
import { flushWalToArchive } from "./recovery.js";
import { scramVerifier } from "./scram.js";
import { ensureCertificate } from "./tls.js";
import { disableStandby } from "./standby.js";
import { parseLsn, segmentOf, segmentName } from "./wal.js";

/**
 * Database branches: a reserved instance filled with a copy of its parent as of a moment, with its own port, archive,
 * backups and passwords. Two ways, the faster one whenever it can answer:
 *  - now, parent running → a live copy: pg_backup_start, the data directory cloned file by file (copyFile with
 *    COPYFILE_FICLONE, i.e. `cp --reflink=auto`: copy-on-write clones where the filesystem has them, an in-kernel copy
 *    where not), pg_backup_stop, then the WAL written during the copy put into the branch's pg_wal. The branch starts
 *    with crash recovery from backup_label up to the end of that WAL: no archive round trip, no promotion, no restart.
 *    The parent keeps taking writes; its cost is the backup's checkpoint and the reads of the copy.
 *  - a past moment, or a parent that is stopped → the parent's newest base backup before the moment, replayed from the
 *    parent's WAL archive up to it (pitr.ts), as a point-in-time restore into a new instance.
 * Each step can be redone after a kill -9: until the record says provisioned, a rerun starts over.
 */
export async function branchInstance(host: ProviderHost, id: string, req: BranchRequest): Promise<BranchResult> {
  const targetTime = req.targetTime ?? null;
  if (targetTime && targetTime.getTime() > Date.now())
    throw new ProviderError("bad_spec", "the branch moment is in the future");
  if (req.parentId === id) throw new ProviderError("bad_spec", "a database cannot be its own branch");
  return host.serial(id, async () => {
    const lap = stepClock();
    const parent = await host.load(req.parentId);
    const branch = await host.load(id);
    if (branch.record.version !== parent.record.version)
      throw new ProviderError("bad_spec", "a branch runs the same PostgreSQL major version as its parent");
    if (branch.record.provisioned && !req.reset && branch.record.branchedFrom) {
      // finished before: a repeated call only makes sure it runs
      await startCluster(branch.primary, 300);
      return resultOf(branch, null);
    }
    if (branch.record.provisioned) {
      await stopAll(branch);
      await disableStandby(branch);
    }
    branch.record.provisioned = false; // until the copy is complete, start() must not run a half-made directory
    // a copy starts a new history: WAL and backups of an earlier one (a reset, a copy cut short) would collide with it
    // (same segment names, other contents: archive_command refuses them and backups wait for them forever)
    await rm(branch.layout.walArchive, { recursive: true, force: true });
    await rm(branch.layout.baseBackups, { recursive: true, force: true });
    // the copied data holds the parent's platform roles: the branch reaches its server with the parent's passwords
    branch.secrets.adminPassword = parent.secrets.adminPassword;
    branch.secrets.replicationPassword = parent.secrets.replicationPassword;
    await saveSecrets(branch.layout, branch.secrets);
    branch.record.walSegmentBytes = parent.record.walSegmentBytes;
    await branch.save();
    await host.prepareDirs(branch, { certificate: false });
    if (await isRunning(branch.primary)) await stopCluster(branch.primary, "immediate").catch(() => {});
    // the branch's own certificate (its host names) is made while its data is copied
    const certificate = ensureCertificate(
      branch.layout.tlsDir,
      branch.record.hostnames[0] ?? "localhost",
      branch.record.hostnames,
      host.runAs,
    );
    certificate.catch(() => {}); // awaited below; a failure is reported there, not as an unhandled rejection

    let made: Made;
    lap("prepareMs");
    if (!targetTime && (await isRunning(parent.primary))) {
      const live = await liveCopy(parent, branch.primary.dataDir, branch.runAs, lap);
      await certificate;
      // the files were just written: one syncfs makes them durable, not ~2 ms of fsync per file (settings.ts)
      await branch.writeNodeConfig(branch.primaryNode, { kind: "primary", initSync: "syncfs" });
      lap("configMs");
      try {
        await startCluster(branch.primary, 3600);
      } catch (err) {
        throw new ProviderError("start_failed", `the branch did not start: ${(err as Error).message}`);
      }
      lap("startMs");
      made = { ...live, method: "live", fromBackupId: null };
    } else {
      // the parent's WAL up to the moment must be in its archive (one commit and a segment switch on the parent)
      await certificate;
      if (await isRunning(parent.primary)) await flushWalToArchive(parent);
      const backup = chooseBackup(await listStoredBackups(parent.layout.baseBackups), targetTime);
      const run = (t: Date | null) => recoverInto(branch, backup, parent.layout.walArchive, t);
      await run(targetTime).catch((err) => {
        // nothing was committed after the moment: the end of the archive is the state at that moment
        if (!(err instanceof TargetBeyondWal)) throw err;
        return run(null);
      });
      lap("copyMs"); // restore of the backup's files and the replay, together
      made = { at: targetTime ?? new Date(), method: "recovery", copy: "verified", fromBackupId: backup.id };
    }
    await applyCredentials(branch, req);
    lap("credentialsMs");
    branch.record.provisioned = true;
    branch.record.removed = false;
    branch.record.branchedFrom = { instanceId: parent.record.id, at: made.at.toISOString(), method: made.method };
    await branch.save();
    if (branch.record.pool) await startPoolFor(branch);
    lap("finishMs");
    return resultOf(branch, { ...made, timings: lap.timings });
  });
}

interface Made {
  at: Date;
  method: "live" | "recovery";
  copy: BranchResult["copy"];
  fromBackupId: string | null;
}

type Lap = ((step: string) => void) & { timings: Record<string, number> };

/** Milliseconds per step, each since the previous lap: where a branch's time goes (the command's result shows it). */
function stepClock(): Lap {
  let last = performance.now();
  const timings: Record<string, number> = {};
  const lap = (step: string) => {
    const now = performance.now();
    timings[step] = Math.round((timings[step] ?? 0) + now - last);
    last = now;
  };
  return Object.assign(lap, { timings });
}

function resultOf(branch: InstanceContext, made: (Made & { timings: Record<string, number> }) | null): BranchResult {
  const from = branch.record.branchedFrom!;
  return {
    instanceId: branch.record.id,
    endpoint: branch.endpoint(),
    branchedAt: made?.at.toISOString() ?? from.at,
    method: made?.method ?? from.method,
    copy: made?.copy ?? "copy",
    fromBackupId: made?.fromBackupId ?? null,
    timings: made?.timings ?? {},
  };
}

/**
 * The branch's own passwords for the owner and the customer superuser, from the spec the first time; afterwards (a
 * reset, or a copy redone after a crash) the ones the branch has are re-applied (kept as verifiers, which rotations
 * update), so its URL keeps working. Other roles come as they were in the parent.
 */
async function applyCredentials(branch: InstanceContext, req: BranchRequest): Promise<void> {
  const owner = branch.record.user;
  const kept = branch.secrets.roleVerifiers ?? {};
  const verifiers =
    kept[owner] && kept[CUSTOMER_SUPERUSER]
      ? { [owner]: kept[owner], [CUSTOMER_SUPERUSER]: kept[CUSTOMER_SUPERUSER] }
      : {
          [owner]: scramVerifier(req.spec.password) ?? req.spec.password,
          [CUSTOMER_SUPERUSER]: scramVerifier(req.spec.superuserPassword) ?? req.spec.superuserPassword,
        };
  await branch.withPrimary(async (c: pg.Client) => {
    for (const [role, verifier] of Object.entries(verifiers))
      await c.query(`ALTER ROLE ${ident(role)} WITH PASSWORD ${literal(verifier)}`);
  });
  branch.secrets.roleVerifiers = verifiers;
  await saveSecrets(branch.layout, branch.secrets);
}

/**
 * An online copy of the running parent into `dest`, ready to start: files cloned between pg_backup_start and
 * pg_backup_stop on one session, backup_label written, and the WAL from the backup's start to its end (which
 * pg_backup_stop closes with a segment switch) copied into pg_wal, from the parent's pg_wal or, for a segment a
 * checkpoint recycled meanwhile, from its archive (a segment leaves pg_wal only once archived).
 */
async function liveCopy(
  parent: InstanceContext,
  dest: string,
  owner: RunAs | null,
  lap: Lap,
): Promise<{ at: Date; copy: "reflink" | "copy" }> {
  return parent.withPrimary(async (c) => {
    const start = await c.query<{ lsn: string }>("SELECT pg_backup_start('branch', true)::text AS lsn");
    lap("checkpointMs");
    let stopped = false;
    try {
      await rm(dest, { recursive: true, force: true });
      await mkdirOwned(dest, owner);
      const copy = await cloneTree(parent.primary.dataDir, dest, owner);
      lap("copyMs");
      const stop = await c.query<{ lsn: string; labelfile: string; spcmapfile: string; at: Date }>(
        "SELECT lsn::text AS lsn, labelfile, spcmapfile, clock_timestamp() AS at FROM pg_backup_stop(false)",
      );
      stopped = true;
      const { lsn, labelfile, spcmapfile, at } = stop.rows[0];
      await writeOwnedFile(path.join(dest, "backup_label"), labelfile, owner);
      if (spcmapfile) await writeOwnedFile(path.join(dest, "tablespace_map"), spcmapfile, owner);
      const tli = Number(/START TIMELINE: (\d+)/.exec(labelfile)?.[1] ?? 1);
      const seg = parent.record.walSegmentBytes;
      const names = requiredWal({ startLsn: start.rows[0].lsn, stopLsn: lsn, timeline: tli }, seg);
      const last = segmentName(tli, segmentOf(parseLsn(lsn), seg), seg);
      if (!names.includes(last)) names.push(last);
      const srcWal = path.join(parent.primary.dataDir, "pg_wal");
      const history = (await readdir(srcWal)).filter((f) => f.endsWith(".history"));
      for (const name of [...history, ...names]) {
        const to = path.join(dest, "pg_wal", name);
        const ok =
          (await cloneFile(path.join(srcWal, name), to, owner)) ||
          (await cloneFile(path.join(parent.layout.walArchive, name), to, owner));
        // the segment right after the end of the backup may not exist yet; every earlier one must
        if (!ok && name !== last && !name.endsWith(".history"))
          throw new ProviderError(
            "recovery_failed",
            `WAL segment ${name} of the parent is neither in pg_wal nor archived`,
          );
      }
      lap("walMs");
      return { at, copy };
    } finally {
      if (!stopped) await c.query("SELECT pg_backup_stop(false)").catch(() => {});
    }
  });
}

/**
 * Clones a data directory as a base backup copies it (layOutCopy: the same directories left empty, the same files
 * skipped), eight files at a time. Answers whether the filesystem cloned (reflink) or copied.
 */
async function cloneTree(src: string, dest: string, owner: RunAs | null): Promise<"reflink" | "copy"> {
  const files = await layOutCopy(src, dest, owner);
  // whether this filesystem clones is found on the first file: FICLONE_FORCE fails where it cannot
  let mode: "reflink" | "copy" = "copy";
  const probe = files.find((f) => f.startsWith("base/")) ?? files[0];
  if (probe) {
    mode = await copyFile(path.join(src, probe), path.join(dest, probe), constants.COPYFILE_FICLONE_FORCE).then(
      () => "reflink" as const,
      () => "copy" as const,
    );
  }
  // where it cannot, no file tries a clone first (one failed ioctl each)
  const flags = mode === "reflink" ? constants.COPYFILE_FICLONE : 0;
  await parallel(files, async (f) => {
    await cloneFile(path.join(src, f), path.join(dest, f), owner, flags);
  });
  return mode;
}

/** `cp --reflink=auto` of one file, owned by the server user; false when the source is gone. */
async function cloneFile(
  src: string,
  dst: string,
  owner: RunAs | null,
  flags: number = constants.COPYFILE_FICLONE,
): Promise<boolean> {
  try {
    await copyFile(src, dst, flags);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && !existsSync(src)) return false;
    throw err;
  }
  if (owner) await chown(dst, owner.uid, owner.gid);
  return true;
}
