import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError, found } from "../http/errors.js";
import { detect, spool, stripWrapper, unpack, type Limits } from "./archive.js";
import type { StaticDeps } from "./config.js";
import * as repo from "./repo.js";

/**
 * An archive uploaded for a deployment awaiting it: spooled to the work directory (size-limited), unpacked and
 * checked entry by entry, then recorded in one transaction (new contents, the manifest, the totals) or not at
 * all. The work directory is removed whatever happens.
 */
export async function receiveUpload(
  deps: StaticDeps,
  p: Principal,
  deployment: repo.DeploymentRow,
  body: Readable,
  contentType: string | undefined,
): Promise<repo.DeploymentRow> {
  if (deployment.status !== "awaiting_upload") throw alreadyUploaded(deployment.id);
  const limits: Limits = { maxBytes: deps.config.maxBytes, maxFiles: deps.config.maxFiles };
  const work = path.join(deps.workDir, randomUUID());
  await mkdir(work, { recursive: true });
  try {
    const archive = path.join(work, "archive");
    await spool(body, archive, limits);
    const files = await unpack(archive, await detect(archive, contentType), work, limits);
    stripWrapper(files);
    return await auditedTransaction(deps.db, p, async (tx) => {
      const cur = found(
        await repo.findDeployment(tx, deployment.site_id, deployment.id, { forUpdate: true }),
        "deployment of this site",
      );
      if (cur.status !== "awaiting_upload") throw alreadyUploaded(cur.id);
      const missing = await repo.touchBlobs(tx, [...new Set(files.map((f) => f.hash))]);
      for (const hash of missing) await repo.insertBlob(tx, hash, await readFile(path.join(work, hash)));
      return repo.recordFiles(tx, cur.id, files);
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const alreadyUploaded = (id: string) =>
  new ApiError("conflict", `Deployment ${id} has its files already; create a new deployment for other files.`);

/** Work directories left by a process that stopped mid-upload (older than an hour) are removed. */
export async function clearStaleWork(workDir: string): Promise<void> {
  const names = await readdir(workDir).catch(() => [] as string[]);
  for (const name of names) {
    const full = path.join(workDir, name);
    const s = await stat(full).catch(() => null);
    if (s && Date.now() - s.mtimeMs > 3600_000) await rm(full, { recursive: true, force: true });
  }
}
