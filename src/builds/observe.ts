import { mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { BuildBaseImage, EndedBuild } from "./contract.js";
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import * as repo from "./repo.js";

/**
 * Base-image refresh (issue 14; src/orgs/README.md, "Base-image refresh"): every ended build is told to the kernel's
 * build observers with its base images and their digests; a success just before its status is written (so whoever
 * sees `succeeded` finds it recorded), any other end after. A succeeded build of an app an observer asks to keep has
 * its unpacked source moved to DATA_DIR/builds/sources/<id> instead of being removed, so `rebuild` can build it
 * again; the newest kept build of an app replaces its older ones (their sources are removed).
 */

interface ObserveDeps {
  db: Db;
  kernel: Pick<Kernel, "all">;
  log: FastifyBaseLogger;
  /** DATA_DIR/builds */
  root: string;
}

export const sourceDirOf = (root: string, id: string) => path.join(root, "sources", id);

export async function tellObservers(
  d: ObserveDeps,
  row: repo.BuildRow,
  run: {
    bases: BuildBaseImage[];
    pushed: { image: string; digest: string | null } | null;
    dir: string;
    /** known before the row says so (a success is told before it is recorded); else read from the row */
    status?: EndedBuild["status"];
  },
): Promise<void> {
  if (!d.kernel.all("buildObservers").length) return;
  try {
    const status = run.status ?? (await repo.statuses(d.db, [row.id])).get(row.id);
    if (status !== "succeeded" && status !== "failed" && status !== "cancelled") return;
    const ended: EndedBuild = {
      id: row.id,
      owner: { kind: row.owner_kind, id: row.owner_id },
      accountId: row.account_id,
      app:
        row.app_kind && row.app_id && row.app_slug ? { kind: row.app_kind, id: row.app_id, slug: row.app_slug } : null,
      status,
      image: run.pushed?.image ?? null,
      digest: run.pushed?.digest ?? null,
      baseImages: run.bases,
    };
    let keep = false;
    for (const o of d.kernel.all("buildObservers")) keep = (await o.ended(ended)) === true || keep;
    if (keep && status === "succeeded" && row.app_id) await keepSource(d, row, run.dir);
  } catch (err) {
    d.log.warn({ err, build: row.id }, "build observers were not told of the build's end");
  }
}

async function keepSource(d: ObserveDeps, row: repo.BuildRow, dir: string): Promise<void> {
  const sources = path.join(d.root, "sources");
  await mkdir(sources, { recursive: true });
  await rename(path.join(dir, "context"), sourceDirOf(d.root, row.id));
  const others = (await readdir(sources)).filter((n) => n !== row.id && /^[0-9a-f-]{36}$/.test(n));
  for (const id of await repo.buildsOfApp(d.db, row.app_id!, others))
    await rm(sourceDirOf(d.root, id), { recursive: true, force: true });
}
