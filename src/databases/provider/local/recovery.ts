import { existsSync } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import path from "node:path";
import { isRunning } from "../../../pgserver/cluster.js";
import { ProviderError, type BackupInfo, type RecoveryRequest, type RecoveryResult } from "../types.js";
import { ident, literal } from "./admin.js";
import { listStoredBackups } from "./backup.js";
import type { InstanceContext } from "./context.js";
import { sleep } from "./exec.js";
import type { ProviderHost } from "./host.js";
import { stopAll } from "./lifecycle.js";
import { chooseBackup, recoverInto, TargetBeyondWal } from "./pitr.js";
import { startPoolFor } from "./pooling.js";
import { readRecord, saveRecord, saveSecrets } from "./record.js";
import { disableStandby } from "./standby.js";

/** Point-in-time recovery of an instance, in place or into a new instance (pitr.ts runs the server's recovery itself). */

export async function recoverTo(host: ProviderHost, id: string, req: RecoveryRequest): Promise<RecoveryResult> {
  const targetTime = req.targetTime ?? null;
  if (targetTime && targetTime.getTime() > Date.now())
    throw new ProviderError("bad_spec", "the recovery target is in the future");
  const intoId = req.intoId ?? id;
  host.layout(intoId);
  return host.serial(id, async () => {
    const source = await host.load(id);
    if (await isRunning(source.primary)) await flushWalToArchive(source);
    const backup = chooseBackup(await listStoredBackups(source.layout.baseBackups), targetTime);
    const target =
      intoId === id
        ? await prepareInPlaceRestore(host, source)
        : await prepareRestoreTarget(host, source, intoId, backup, targetTime);
    const run = (t: Date | null) => recoverInto(target, backup, source.layout.walArchive, t);
    let timeline: number;
    try {
      timeline = await run(targetTime);
    } catch (err) {
      // nothing was committed after the target: the end of the archive *is* the state at that moment
      if (!(err instanceof TargetBeyondWal)) throw err;
      timeline = await run(null);
    }
    // roles come back as they were at the target time; passwords rotated since must stay rotated
    const verifiers = Object.entries(target.secrets.roleVerifiers ?? {});
    if (verifiers.length) {
      await target.withPrimary(async (c) => {
        for (const [role, verifier] of verifiers)
          await c.query(`ALTER ROLE ${ident(role)} WITH PASSWORD ${literal(verifier)}`);
      });
    }
    target.record.provisioned = true;
    target.record.removed = false;
    target.record.restoredFrom = { instanceId: id, backupId: backup.id, targetTime: targetTime?.toISOString() ?? null };
    await target.save();
    if (target.record.pool) await startPoolFor(target);
    return {
      instanceId: intoId,
      endpoint: target.endpoint(),
      fromBackupId: backup.id,
      targetTime: targetTime?.toISOString() ?? null,
      timeline,
    };
  });
}

/** Makes sure every change up to now is in the archive: one commit (a timestamp recovery can stop at) and a segment switch. */
export async function flushWalToArchive(ctx: InstanceContext): Promise<void> {
  const walFile = await ctx.withPrimary(async (c) => {
    await c.query("BEGIN; SELECT pg_current_xact_id(); COMMIT;");
    return (await c.query<{ f: string }>("SELECT pg_walfile_name(pg_switch_wal()) AS f")).rows[0].f;
  });
  const file = path.join(ctx.layout.walArchive, walFile);
  for (let i = 0; i < 600 && !existsSync(file); i++) await sleep(100);
  if (!existsSync(file))
    throw new ProviderError("recovery_failed", `WAL segment ${walFile} did not reach the archive; check archiving`);
}

/** A new instance sharing the source's roles (they come with the backup) on its own port and archive. */
async function prepareRestoreTarget(
  host: ProviderHost,
  source: InstanceContext,
  intoId: string,
  backup: BackupInfo,
  targetTime: Date | null,
): Promise<InstanceContext> {
  const layout = host.layout(intoId);
  const existing = await readRecord(layout);
  if (existing?.provisioned) throw new ProviderError("bad_spec", `instance ${intoId} already exists`);
  if (!existing) {
    await host.allocating(async () => {
      await host.checkCapacity();
      const port = await host.allocatePort();
      await mkdir(layout.instanceDir, { recursive: true, mode: 0o711 });
      await saveSecrets(layout, { ...source.secrets });
      await saveRecord(layout, {
        ...source.record,
        id: intoId,
        port,
        primaryNode: "a",
        provisioned: false,
        removed: false,
        readOnlyReason: null,
        standby: null,
        pool: null,
        switchover: null,
        restoredFrom: {
          instanceId: source.record.id,
          backupId: backup.id,
          targetTime: targetTime?.toISOString() ?? null,
        },
        createdAt: new Date().toISOString(),
      });
    });
  }
  const ctx = await host.load(intoId);
  await host.prepareDirs(ctx);
  return ctx;
}

/** In place: everything stops, the current data directory is kept aside (purge removes it), the standby goes. */
async function prepareInPlaceRestore(host: ProviderHost, ctx: InstanceContext): Promise<InstanceContext> {
  await stopAll(ctx);
  await disableStandby(ctx);
  const dataDir = ctx.primary.dataDir;
  if (ctx.record.provisioned && existsSync(dataDir)) {
    await rename(dataDir, path.join(ctx.layout.instanceDir, `pre-restore-${Date.now()}`));
  }
  ctx.record.provisioned = false; // until recovery completes, start() must not run a half-restored directory
  await ctx.save();
  await host.prepareDirs(ctx);
  return ctx;
}
