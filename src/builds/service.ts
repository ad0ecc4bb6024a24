import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { ownerColumnsOf } from "../kernel/owner.js";
import { cp, mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import type { Static } from "@sinclair/typebox";
import type { Db } from "../store/db.js";
import type { SecretBox } from "../kernel/secrets.js";
import { sealBuildSecrets } from "./build-secrets.js";
import type { Kernel } from "../kernel/kernel.js";
import type { JobQueue } from "../jobs/queue.js";
import type { InstanceFilter, Principal } from "../auth/principal.js";
import { coverage } from "../auth/scopes.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError, found, scopeInsufficient } from "../http/errors.js";
import type { AppRef } from "../apps/contract.js";
import { builderProblem } from "./buildah.js";
import { workDirOf } from "./build-job.js";
import type { BuildsConfig } from "./config.js";
import { findDockerfile, insidePath, unpackSource } from "./upload.js";
import { sourceDirOf } from "./observe.js";
import * as repo from "./repo.js";
import type { BuildEventBody, CreateBuildBody } from "./inputs.js";

export const WAKE_JOB = "builds.wake";
/** the kind admission sees for a build (no price in the catalog: organization deploy rules and blocks apply) */
export const BUILD_KIND = "build";
/** client events kept per build (the newest) */
const EVENTS_KEPT = 500;

export interface BuildsDeps {
  db: Db;
  /** seals build secrets at rest */
  secrets: SecretBox;
  kernel: Pick<Kernel, "admit" | "use" | "require" | "permits" | "assertMayChange">;
  jobs: Pick<JobQueue, "send">;
  config: BuildsConfig;
  /** DATA_DIR/builds */
  root: string;
  /** the runner of this process, when it runs one (worker role) */
  local: () => { wake(): void; cancelled(id: string): void } | null;
}

export type CreateInput = Static<typeof CreateBuildBody>;
export type EventInput = Static<typeof BuildEventBody>;

/** a new build's own columns (repo.insertBuild) but id and owner; its host may be null (placed at insert) */
type BuildFields = Omit<
  Parameters<typeof repo.insertBuild>[1],
  "id" | keyof ReturnType<typeof ownerColumnsOf> | "host_id"
> & {
  host_id: string | null;
};

const hashToken = (token: string) => createHash("sha256").update(token).digest();

/** A path inside the source archive given by the client: relative, no `..`, normalized. */
function archivePath(value: string, field: string): string {
  const p = path.posix.normalize(value.replace(/^\.\//, ""));
  if (!insidePath(p) || p.startsWith("../"))
    throw new ApiError("invalid_request", `${field} must be a relative path inside the source archive.`);
  return p;
}

/**
 * Builds for a caller: creation (with a single-use upload URL), the upload itself, start, cancel, client
 * events, reads. Everything is within the principal's owner; the runner on the build's host does the work.
 */
export function buildsService(deps: BuildsDeps) {
  const { db, kernel, config } = deps;

  async function requireBuilder(): Promise<void> {
    const problem = await builderProblem(config.buildah);
    if (problem) throw new ApiError("builder_unavailable", problem);
    if (!kernel.require("hosts").local.roles.includes("worker"))
      throw new ApiError(
        "builder_unavailable",
        "This process runs no builds (ROLES without worker); send build requests to a process that does.",
      );
    if (!kernel.use("imageAccess")?.pushFor)
      throw new ApiError("registry_unavailable", "There is no image registry on this platform to push builds to.");
  }

  /**
   * The app a build will roll: the caller's pod or pod group. Updating it is a pods write, so a scoped key
   * needs pods:write covering that app beside builds:write (which the route checked).
   */
  async function resolveApp(p: Principal, ref: string): Promise<AppRef> {
    const apps = kernel.use("appImages");
    const app = apps && (await apps.find(p, ref));
    if (!app) throw new ApiError("not_found", `No pod or pod group "${ref}" for this account to deploy to.`);
    if (p.kind === "scoped") {
      const cov = coverage(p.grants, "pods", "write");
      const ok =
        cov.kind === "all" || (cov.kind === "instances" && (await kernel.permits("pods", p.owner, app.id, cov.refs)));
      if (!ok)
        throw scopeInsufficient(
          `Updating ${app.kind} "${app.slug}" from source needs pods:write for it beside builds:write.`,
        );
    }
    // deploying to a company app changes it: its responsible member or an admin
    await kernel.assertMayChange(db, "pods", p, app.id);
    return app;
  }

  /**
   * A new build row for the caller, in the transaction of its admission (deploy rules, budgets, funds) and audit row;
   * `host_id` null places it (a rebuild stays on the host that keeps its source).
   */
  function admitAndInsert(p: Principal, fields: BuildFields, token: string | null = null) {
    return auditedTransaction(db, p, async (tx) => {
      await kernel.admit(tx, { owner: p.owner, accountId: p.accountId, kind: BUILD_KIND, size: "standard" });
      const host = fields.host_id ?? (await kernel.require("hosts").place(tx, { kind: "build", owner: p.owner }));
      const row = await repo.insertBuild(
        tx,
        {
          ...fields,
          id: randomUUID(),
          ...ownerColumnsOf(p),
          host_id: host,
        },
        config.uploadTtlSeconds,
      );
      return { row, token };
    });
  }

  async function create(p: Principal, input: CreateInput) {
    await requireBuilder();
    const dockerfile = archivePath(input.dockerfile ?? "Dockerfile", "dockerfile");
    const contextPath = archivePath(input.context_path ?? ".", "context_path");
    const app = input.app ? await resolveApp(p, input.app) : null;
    const token = randomBytes(32).toString("base64url");
    const sealed = sealBuildSecrets(deps.secrets, input.build_secrets);
    // the token travels in the transaction's result: a retry of its Idempotency-Key answers this build with this
    // token (http/idempotent-change.ts), not a new token that does not match the stored hash
    const made = await admitAndInsert(
      p,
      {
        app_kind: app?.kind ?? null,
        app_id: app?.id ?? null,
        app_slug: app?.slug ?? null,
        dockerfile,
        context_path: contextPath,
        host_id: null,
        upload_token_hash: hashToken(token),
        build_args: input.build_args ?? {},
        build_secrets_sealed: sealed.sealed,
        build_secrets_meta: sealed.meta,
      },
      token,
    );
    return { row: made.row, token: made.token! };
  }

  async function get(p: Principal, id: string): Promise<repo.BuildRow> {
    return found(await repo.findBuild(db, p.owner, id), "build");
  }

  const list = (p: Principal, filter: InstanceFilter, limit: number) => repo.listBuilds(db, p.owner, filter, limit);
  const events = (row: repo.BuildRow) => repo.eventsOf(db, row.id);

  /**
   * The upload behind an upload URL: the token is checked and spent first (a URL works once, whatever
   * happens next), then the archive is unpacked into the build's working directory as it arrives. A refused
   * archive fails the build, with the reason.
   */
  async function upload(id: string, token: string, body: Readable) {
    const hash = hashToken(token);
    const known = await repo.buildById(db, id);
    const matches =
      known?.upload_token_hash && known.upload_token_hash.length === hash.length
        ? timingSafeEqual(known.upload_token_hash, hash)
        : false;
    if (!known || !matches) {
      body.resume();
      throw new ApiError(
        "auth_required",
        "This upload URL is not valid: it was used already, has expired, or the build is gone. Create a new build.",
      );
    }
    if (known.host_id !== kernel.require("hosts").local.id) {
      body.resume();
      throw new ApiError(
        "host_unavailable",
        `This build runs on host ${known.host_id}; upload its source through that host's API.`,
      );
    }
    const claimed = await repo.claimUpload(db, id, hash);
    if (!claimed) {
      body.resume();
      throw new ApiError("auth_required", "This upload URL was used already or has expired. Create a new build.");
    }
    const dir = path.join(workDirOf(deps.root, id), "context");
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    try {
      const bytes = await unpackSource(body, dir, config);
      await findDockerfile(path.join(dir, claimed.context_path), claimed.dockerfile);
      const row = await repo.markUploaded(db, id, bytes);
      if (!row) throw new ApiError("conflict", "The build was cancelled while its source was arriving.");
      return row;
    } catch (err) {
      body.resume();
      await rm(workDirOf(deps.root, id), { recursive: true, force: true }).catch(() => {});
      await repo.finish(db, id, "failed", { reason: `source upload refused: ${(err as Error).message}` });
      throw err;
    }
  }

  /** Queues an uploaded build on its host; the host's runner starts it when a slot is free. */
  async function start(p: Principal, id: string): Promise<repo.BuildRow> {
    await requireBuilder();
    const row = await auditedTransaction(db, p, async (tx) => {
      const cur = found(await repo.findBuild(tx, p.owner, id, { forUpdate: true }), "build");
      if (cur.status !== "awaiting_upload")
        throw new ApiError("conflict", `The build is ${cur.status}; only a build awaiting its start can be started.`);
      if (!cur.uploaded_at)
        throw new ApiError(
          "conflict",
          "The source has not been uploaded yet: PUT the tar.gz archive to upload_url first.",
        );
      return repo.markQueued(tx, cur.id);
    });
    const local = deps.local();
    if (local && row.host_id === kernel.require("hosts").local.id) local.wake();
    else await deps.jobs.send(WAKE_JOB, {}, { host: row.host_id }).catch(() => null);
    return row;
  }

  /** Stops a build that has not ended: a running one's processes are killed at once; the reason is recorded. */
  async function cancel(p: Principal, id: string, why: { reason?: string; phase?: string; detail?: unknown }) {
    const row = await auditedTransaction(db, p, async (tx) => {
      const cur = found(await repo.findBuild(tx, p.owner, id, { forUpdate: true }), "build");
      const done = await repo.finish(tx, cur.id, "cancelled", {
        reason: why.reason ?? "cancelled by the user",
        cancel: { reason: why.reason ?? null, phase: why.phase ?? cur.phase, detail: why.detail ?? null },
      });
      if (!done) throw new ApiError("conflict", `The build has ended already (${cur.status}).`);
      return done;
    });
    deps.local()?.cancelled(row.id);
    return row;
  }

  async function addEvent(p: Principal, id: string, e: EventInput) {
    const row = await get(p, id);
    return auditedTransaction(db, p, (tx) =>
      repo.insertEvent(
        tx,
        { build_id: row.id, phase: e.phase, level: e.level ?? "info", message: e.message, detail: e.detail },
        EVENTS_KEPT,
      ),
    );
  }

  /**
   * Base-image refresh (issue 14): a new build of a kept source (observe.ts) with the same Dockerfile, context and
   * app, queued at once on the source's host; it pulls its base images again and rolls the app on success. The
   * source lives on its build host, so the call must reach that host's API (as an upload does).
   */
  async function rebuild(p: Principal, sourceId: string): Promise<repo.BuildRow> {
    await requireBuilder();
    const src = found(await repo.findBuild(db, p.owner, sourceId), "build");
    if (src.host_id !== kernel.require("hosts").local.id)
      throw new ApiError(
        "host_unavailable",
        `Build ${src.id} ran on host ${src.host_id}; rebuild it through that host's API.`,
      );
    const kept = sourceDirOf(deps.root, src.id);
    if (!src.app_id || !(await stat(kept).catch(() => null))?.isDirectory())
      throw new ApiError(
        "conflict",
        `The source of build ${src.id} is no longer available (only the newest successful build of a company app keeps it); build the app from source again.`,
      );
    const app = await resolveApp(p, src.app_id).catch((err) => {
      throw err instanceof ApiError && err.code === "not_found"
        ? new ApiError("conflict", `The app ${src.app_slug} of build ${src.id} no longer exists.`)
        : err;
    });
    const secrets = await repo.buildSecretsOf(db, src.id);
    const { row } = await admitAndInsert(p, {
      app_kind: app.kind,
      app_id: app.id,
      app_slug: app.slug,
      dockerfile: src.dockerfile,
      context_path: src.context_path,
      host_id: src.host_id,
      upload_token_hash: null,
      // the build it repeats, with the same build-time values (src/builds/build-secrets.ts)
      build_args: src.build_args,
      build_secrets_sealed: secrets,
      build_secrets_meta: src.build_secrets_meta,
    });
    try {
      await cp(kept, path.join(workDirOf(deps.root, row.id), "context"), { recursive: true, verbatimSymlinks: true });
      await repo.markUploaded(db, row.id, Number(src.source_bytes ?? 0));
    } catch (err) {
      await rm(workDirOf(deps.root, row.id), { recursive: true, force: true }).catch(() => {});
      await repo.finish(db, row.id, "failed", { reason: `the kept source could not be copied: ${String(err)}` });
      throw err;
    }
    const queued = await repo.markQueued(db, row.id);
    deps.local()?.wake();
    return queued;
  }

  /**
   * A build of a source archive another area holds in memory (preview environments): created, unpacked and queued at
   * once on this host. A refused archive fails the build with the reason, as an upload does.
   */
  async function fromArchive(p: Principal, src: { archive: Buffer; dockerfile: string; contextPath: string }) {
    await requireBuilder();
    const dockerfile = archivePath(src.dockerfile, "dockerfile");
    const contextPath = archivePath(src.contextPath, "context_path");
    const fields = { app_kind: null, app_id: null, app_slug: null, dockerfile, context_path: contextPath };
    const noArgs = { build_args: {}, build_secrets_sealed: null, build_secrets_meta: {} };
    const local = kernel.require("hosts").local.id;
    const { row } = await admitAndInsert(p, { ...fields, ...noArgs, host_id: local, upload_token_hash: null });
    const dir = path.join(workDirOf(deps.root, row.id), "context");
    try {
      await mkdir(dir, { recursive: true });
      const bytes = await unpackSource(Readable.from([src.archive]), dir, config);
      await findDockerfile(path.join(dir, contextPath), dockerfile);
      await repo.markUploaded(db, row.id, bytes);
    } catch (err) {
      await rm(workDirOf(deps.root, row.id), { recursive: true, force: true }).catch(() => {});
      await repo.finish(db, row.id, "failed", { reason: `source refused: ${(err as Error).message}` });
      return { id: row.id };
    }
    await repo.markQueued(db, row.id);
    deps.local()?.wake();
    return { id: row.id };
  }

  return { create, get, list, events, upload, start, cancel, addEvent, requireBuilder, rebuild, fromArchive };
}

export type BuildsService = ReturnType<typeof buildsService>;
