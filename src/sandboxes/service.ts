import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import type { FastifyBaseLogger } from "fastify";
import { int } from "../config/config.js";
import type { Db } from "../store/db.js";
import { inTransaction } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import type { Kernel } from "../kernel/kernel.js";
import { ownerColumnsOf, ownerKey } from "../kernel/owner.js";
import type { InstanceFilter, Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError, found } from "../http/errors.js";
import { createOnce } from "../http/idempotent-change.js";
import {
  ownerNetworkName,
  RuntimeError,
  TIMED_OUT_EXIT_CODE,
  type ContainerSpec,
  type ExecResult,
  type RuntimeProvider,
} from "../runtime/index.js";
import { buildBusyboxImage } from "../runtime/images.js";
import * as repo from "./repo.js";

/** how near its end a sandbox whose container is gone counts as ended by its timeout, not lost */
const END_MARGIN_MS = 3000;

/** Built by the platform at first use (busybox-static, FROM scratch) when SANDBOX_IMAGE names none. */
export const DEFAULT_SANDBOX_IMAGE = "localhost/platform/sandbox:busybox";
/** stdout and stderr of one exec are each cut here */
export const OUTPUT_LIMIT = 64 * 1024;
/** commands one sandbox runs at once through this process (each holds a podman client on the host) */
export const MAX_CONCURRENT_EXECS = 8;
export const REAP_JOB = "sandboxes.reap";
export const EXPIRE_JOB = "sandboxes.expire";
/** the kind admission sees for a sandbox (no price in the catalog: organization deploy rules and blocks apply) */
export const SANDBOX_KIND = "sandbox";
/** the host's static busybox, mounted read-only so any image (even one without `sleep`) can be kept alive */
const HOST_BUSYBOX = "/bin/busybox";
const KEEPER = "/.sandbox/busybox";

export interface SandboxesConfig {
  /** sandboxes one owner may have running at once (SANDBOX_MAX_PER_OWNER) */
  maxPerOwner: number;
  /** memory of each sandbox (SANDBOX_MEMORY_MB); one CPU, 256 processes */
  memoryMb: number;
  /** the image used when a request names none (SANDBOX_IMAGE); null: the platform's own busybox image */
  image: string | null;
}

export function sandboxesConfig(env: Record<string, string | undefined>): SandboxesConfig {
  return {
    maxPerOwner: int(env, "SANDBOX_MAX_PER_OWNER", 5, 1, 10_000),
    memoryMb: int(env, "SANDBOX_MEMORY_MB", 512, 16, 1_048_576),
    image: env.SANDBOX_IMAGE || null,
  };
}

export interface SandboxesDeps {
  db: Db;
  jobs: Pick<JobQueue, "send">;
  runtime: RuntimeProvider;
  kernel: Pick<Kernel, "admit" | "use" | "require">;
  config: SandboxesConfig;
  log: FastifyBaseLogger;
}

export const containerName = (id: string) => `sbx-${id}`;
/** the labels the reaper finds this host's sandbox containers by */
export const sandboxLabels = (hostId: string) => ({ "platform.kind": "sandbox", "platform.host": hostId });

export function sandboxSpec(
  row: repo.SandboxRow,
  image: string,
  pullAuth: ContainerSpec["pullAuth"],
  seconds: number,
  config: SandboxesConfig,
): ContainerSpec {
  const keeper = existsSync(HOST_BUSYBOX);
  return {
    name: containerName(row.id),
    image,
    // the container's program only waits; the work happens in exec sessions
    entrypoint: keeper ? [KEEPER, "sleep", String(seconds)] : ["sleep", String(seconds)],
    command: null,
    env: {},
    port: null,
    limits: { cpus: 1, memoryMb: config.memoryMb, pids: 256 },
    network: row.network ? ownerNetworkName({ kind: row.owner_kind, id: row.owner_id }) : null,
    mounts: keeper ? [{ source: HOST_BUSYBOX, target: KEEPER, readOnly: true }] : [],
    labels: {
      ...sandboxLabels(row.host_id),
      "platform.sandbox": row.id,
      "platform.owner": ownerKey({ kind: row.owner_kind, id: row.owner_id }),
    },
    pullAuth,
    // the runtime kills and deletes it at its time even if no platform process is running then
    timeoutSeconds: seconds,
    autoRemove: true,
  };
}

/** Removes a sandbox's container (it may be gone already). The owner's network stays: its pods may use it. */
export async function destroy(runtime: RuntimeProvider, row: Pick<repo.SandboxRow, "id">): Promise<void> {
  await runtime.remove(containerName(row.id));
}

let defaultImage: Promise<string> | null = null;

/** The platform's own sandbox image, built at first use in this process (skipped when the same build exists). */
function platformImage(): Promise<string> {
  defaultImage ??= buildBusyboxImage({ tag: DEFAULT_SANDBOX_IMAGE, workdir: "/root", cmd: ["sh"] }).then(
    () => DEFAULT_SANDBOX_IMAGE,
    (err: Error) => {
      defaultImage = null;
      throw new ApiError("runtime_unavailable", `The default sandbox image could not be built: ${err.message}`);
    },
  );
  return defaultImage;
}

/**
 * Sandboxes for a caller: every read within the principal's owner. Creation records the row first (a
 * crash leaves a row the reaper cleans), then starts the container synchronously; exec runs in the
 * container with the sandbox's remaining life as its upper time bound.
 */
export function sandboxesService(deps: SandboxesDeps) {
  const { db, runtime, kernel, config, log } = deps;
  const execs = new Map<string, number>();

  async function requireRuntime(): Promise<void> {
    const why = await runtime.unavailable();
    if (why) throw new ApiError("runtime_unavailable", why);
    if (!kernel.require("hosts").local.roles.includes("worker"))
      throw new ApiError(
        "runtime_unavailable",
        "This process runs no containers (ROLES without worker); send sandbox requests to a process that does.",
      );
  }

  async function get(p: Principal, id: string): Promise<repo.SandboxRow> {
    return found(await repo.findSandbox(db, p.owner, id), "sandbox");
  }

  const list = (p: Principal, filter: InstanceFilter) => repo.listSandboxes(db, p.owner, filter);

  async function create(p: Principal, input: { image?: string; timeout_s?: number; network?: boolean }) {
    await requireRuntime();
    // refused before anything is built or recorded; the image checked is the one the caller named
    await kernel.admit(db, {
      owner: p.owner,
      accountId: p.accountId,
      kind: SANDBOX_KIND,
      size: "standard",
      image: input.image,
      features: input.network ? ["network"] : [],
    });
    const hostId = kernel.require("hosts").local.id;
    let image = input.image ?? config.image;
    const pullAuth = image ? ((await kernel.use("imageAccess")?.pullFor(p.owner, image)) ?? null) : null;
    image ??= await platformImage();
    const insertedAt = Date.now();
    // the insert is the create an Idempotency-Key binds: a retry after a crash answers that sandbox as it is now
    // (http/idempotent-change.ts), never starting a second one
    const made = await inTransaction(db, (tx) =>
      createOnce(tx, p.audit, () =>
        repo.insertSandbox(
          tx,
          {
            id: randomUUID(),
            ...ownerColumnsOf(p),
            image: image!,
            network: input.network ?? false,
            timeout_s: input.timeout_s ?? 300,
            host_id: hostId,
          },
          config.maxPerOwner,
        ),
      ),
    );
    const row = made.value;
    if (row && made.replayed) return (await repo.findSandbox(db, p.owner, row.id)) ?? row;
    if (!row)
      throw new ApiError(
        "provision_failed",
        `At most ${config.maxPerOwner} sandboxes run at once per owner; delete one or wait for one to expire.`,
      );
    try {
      if (row.network) await runtime.ensureNetwork(ownerNetworkName(p.owner));
      // counted on this host's clock from the insert, less a second for the container's own start: the runtime
      // kills it before expires_at
      const seconds = Math.max(1, Math.floor(row.timeout_s - (Date.now() - insertedAt) / 1000 - 1));
      await runtime.create(sandboxSpec(row, image, pullAuth, seconds, config));
    } catch (err) {
      await destroy(runtime, row).catch(() => {});
      await repo.markRemoved(db, row.id, `creation failed: ${(err as Error).message}`);
      if (err instanceof RuntimeError && err.kind === "image_pull")
        throw new ApiError("bad_image", `The image ${image} could not be pulled: ${err.message}`);
      throw err;
    }
    const started = await auditedTransaction(db, p, (tx) => repo.markStarted(tx, row.id));
    if (!started) {
      // deleted while it was being created
      await destroy(runtime, row).catch(() => {});
      return (await repo.findSandbox(db, p.owner, row.id))!;
    }
    // the reaper marks it expired right after its time (the runtime removes the container by itself)
    await deps.jobs
      .send(EXPIRE_JOB, { id: row.id }, { host: hostId, startAfterSeconds: row.timeout_s + 1 })
      .catch((err) => log.warn({ err, sandbox: row.id }, "expiry job not queued; the periodic reaper marks it"));
    return started;
  }

  async function exec(p: Principal, id: string, command: string[], timeoutS?: number): Promise<ExecResult> {
    const row = await get(p, id);
    if (row.state === "removed") throw new ApiError("conflict", "The sandbox was deleted.");
    if (row.shown_state === "expired" || (row.remaining_ms ?? 0) < 1)
      throw new ApiError("conflict", "The sandbox has expired.");
    await requireRuntime();
    if (row.host_id !== kernel.require("hosts").local.id)
      throw new ApiError(
        "runtime_unavailable",
        `The sandbox runs on host ${row.host_id}; this process cannot reach it.`,
      );
    const timeoutMs = Math.min(row.remaining_ms!, (timeoutS ?? Infinity) * 1000);
    const deadline = Date.now() + row.remaining_ms!;
    const name = containerName(row.id);
    // the runtime ends the container a little before expires_at: a command still running then ran out of time
    const atItsEnd = () => Date.now() >= deadline - END_MARGIN_MS;
    const endedWithSandbox = async () =>
      atItsEnd() && (await runtime.inspect(name).catch(() => null))?.status !== "running";
    const outOfTime = (partial: Partial<ExecResult>): ExecResult => ({
      exitCode: TIMED_OUT_EXIT_CODE,
      stdout: partial.stdout ?? "",
      stderr: partial.stderr ?? "",
      truncated: true,
      timedOut: true,
    });
    const busy = execs.get(row.id) ?? 0;
    if (busy >= MAX_CONCURRENT_EXECS)
      throw new ApiError("conflict", `The sandbox already runs ${busy} commands; wait for one to finish.`);
    execs.set(row.id, busy + 1);
    try {
      const res = await runtime.exec(name, command, { timeoutMs, maxBytes: OUTPUT_LIMIT });
      return !res.timedOut && res.exitCode !== 0 && (await endedWithSandbox()) ? outOfTime(res) : res;
    } catch (err) {
      if (!(err instanceof RuntimeError) || (await runtime.inspect(name).catch(() => true)) !== null) throw err;
      // its container is gone at the sandbox's end, while the command ran: the command ran out of time, as when
      // the exec's own cut comes first (a CI run under load saw the runtime's removal win and answered 409)
      if (atItsEnd()) return outOfTime({});
      // lost well before its time (host restart, removed by hand)
      await destroy(runtime, row).catch(() => {});
      await repo.markExpired(db, row.id, "its container stopped before the sandbox's timeout");
      throw new ApiError("conflict", "The sandbox has expired.");
    } finally {
      const left = (execs.get(row.id) ?? 1) - 1;
      if (left > 0) execs.set(row.id, left);
      else execs.delete(row.id);
    }
  }

  async function remove(p: Principal, id: string): Promise<repo.SandboxRow> {
    const row = await get(p, id);
    if (row.state === "removed") return row;
    const removed = (await auditedTransaction(db, p, (tx) => repo.markRemoved(tx, row.id, null)))!;
    if (row.host_id === kernel.require("hosts").local.id && (await runtime.unavailable()) === null) {
      await destroy(runtime, row).catch((err) =>
        log.warn({ err, sandbox: row.id }, "sandbox container not removed; the reaper removes it"),
      );
    } else {
      // the reaper of the sandbox's host removes containers whose row is no longer running
      await deps.jobs.send(REAP_JOB, {}, { host: row.host_id }).catch(() => {});
    }
    return removed;
  }

  return { create, list, get, exec, remove };
}

export type SandboxesService = ReturnType<typeof sandboxesService>;

/** What the area builds once per process (routes, jobs and tests reach the runtime through it). */
export interface SandboxesState {
  runtime: RuntimeProvider;
  config: SandboxesConfig;
  service: SandboxesService;
}
