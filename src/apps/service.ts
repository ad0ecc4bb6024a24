import { randomBytes, randomUUID } from "node:crypto";
import type pg from "pg";
import { isUniqueViolation, type Db, type Queryable } from "../store/db.js";
import { ApiError, notFound } from "../http/errors.js";
import type { InstanceFilter, Principal } from "../auth/principal.js";
import type { Kernel } from "../kernel/kernel.js";
import type { JobQueue } from "../jobs/queue.js";
import { maskSecrets, type SecretBox } from "../kernel/secrets.js";
import { ownerColumnsOf, type Owner } from "../kernel/owner.js";
import { auditedTransaction } from "../audit/record.js";
import type { RuntimeProvider } from "../runtime/provider.js";
import * as repo from "./repo.js";
import { openEnv } from "./container-spec.js";
import { checkVolumes } from "./volumes/attach.js";
import type { PodInput, PodPatch } from "./types.js";
import { expandTemplate } from "./templates/expand.js";
import { applyEnvChange, readEnvDoc, sealEnvDoc, sealNewEnv, secretsPatchTo, setterOf } from "./secrets/env.js";
import { DEFAULT_POD_SIZE, hostFits, podSizes, POD_KIND } from "./sizes.js";
import { DEFAULT_DEADLINE_SECONDS, DEFAULT_STOP_GRACE_SECONDS, validateChecks } from "./checks/spec.js";
import { changedFields, describeChange } from "./releases/changes.js";
import { insertRelease } from "./releases/repo.js";
import { setPodIdleStop } from "./idle/repo.js";
import { memberIdle, validateIdleStop } from "./idle/validate.js";
import { startAdmission } from "./admission.js";
export { startAdmission };

export const RECONCILE_JOB = "apps.reconcile";

/** Asks the pod's host to reconcile it; a lost send is made good by that host's sweep, so it never fails the caller. */
export const sendReconcile = (jobs: Pick<JobQueue, "send">, podId: string, hostId: string) =>
  jobs.send(RECONCILE_JOB, { podId }, { host: hostId }).catch(() => null);

export interface PodsDeps {
  db: Db;
  secrets: SecretBox;
  kernel: Pick<Kernel, "admit" | "all" | "use" | "require" | "appSlugTakenElsewhere">;
  jobs: Pick<JobQueue, "send">;
  runtime: RuntimeProvider;
  gpuCatalogFile: string;
  /** APPS_IDLE_MIN_SECONDS: the shortest idle_stop_seconds accepted (scale-to-zero, src/apps/idle) */
  idleMinSeconds?: number;
}

/** Pods: creation goes through admission, every change is a new generation the reconciler rolls out. */
export function podsService(deps: PodsDeps) {
  const { db, secrets, kernel, jobs } = deps;
  const idleMinSeconds = deps.idleMinSeconds ?? 60;

  /** 503 runtime_unavailable with the install sentence, before anything is recorded */
  async function requireRuntime(): Promise<void> {
    const missing = await deps.runtime.unavailable();
    if (missing) throw new ApiError("runtime_unavailable", missing);
  }

  /** `external`: the pod goes to an organization's own host, whose agent reported its GPUs (placement checks them) */
  function sizeOf(id: string, external = false) {
    const size = podSizes(deps.gpuCatalogFile).find((s) => s.id === id);
    if (!size) {
      const known = podSizes(deps.gpuCatalogFile).map((s) => s.id);
      throw new ApiError("bad_size", `Unknown pod size "${id}"; sizes: ${known.join(", ")}.`);
    }
    const unfit = external ? null : hostFits(size);
    if (unfit) throw new ApiError("provision_failed", `No host can run this pod: ${unfit}.`);
    return size;
  }

  /** the reconciler on the pod's host takes it from here (a lost send is made good by the host's sweep) */
  const kick = async (pod: Pick<repo.PodRow, "id" | "host_id">) => {
    if (!pod.host_id) return null;
    // an organization external host's agent follows its pods by itself (long poll woken by the store): no job
    if (await kernel.use("externalHosts")?.isExternal(db, pod.host_id)) return null;
    return sendReconcile(jobs, pod.id, pod.host_id);
  };

  async function locked(tx: Queryable, p: Principal, ref: string): Promise<repo.PodRow> {
    const pod = await repo.findPod(tx, p.owner, ref, { forUpdate: true });
    if (!pod || pod.desired_state === "removed" || pod.linked_email) throw notFound("pod");
    return pod;
  }

  async function resolveDatabases(q: Queryable, owner: Owner, refs: string[]): Promise<string[]> {
    const source = kernel.all("attachables").find((a) => a.resource === "databases");
    const ids: string[] = [];
    for (const ref of refs) {
      const found = source && (await source.resolve(q, owner, ref));
      if (!found) throw new ApiError("not_found", `No database "${ref}" for this account to attach.`);
      if (!ids.includes(found.id)) ids.push(found.id);
    }
    return ids;
  }

  /**
   * `host_id` / `host_labels`: a company pod on one of the organization's external hosts (src/orgs/hosts). Its
   * agent has no volumes or databases of this platform to give it, so those are refused there for now.
   */
  function externalPlacement(p: Principal, raw: PodInput, input: PodInput) {
    if (raw.host_id === undefined && raw.host_labels === undefined) return null;
    if (p.owner.kind !== "org")
      throw new ApiError(
        "invalid_request",
        "host_id and host_labels place company pods on the organization's own hosts; act for the organization (X-Owner: org).",
      );
    if (input.volumes?.length || input.databases?.length)
      throw new ApiError("invalid_request", "A pod on an external host cannot attach volumes or databases yet.");
    return { hostId: raw.host_id, hostLabels: raw.host_labels };
  }

  async function create(
    p: Principal,
    raw: PodInput,
    opts: { groupId?: string; linked?: { email: string; service: string } } = {},
  ): Promise<repo.PodRow> {
    await requireRuntime();
    const input = raw.template ? await expandTemplate(db, secrets, p.owner, raw.template, raw) : raw;
    if (!input.image) throw new ApiError("invalid_request", "image is required (directly or through a template).");
    if (!input.name) throw new ApiError("invalid_request", "name is required (directly or through a template).");
    const external = externalPlacement(p, raw, input);
    const size = sizeOf(input.size ?? DEFAULT_POD_SIZE, !!external);
    validateChecks(input.checks, input.port);
    validateIdleStop(input.idle_stop_seconds, idleMinSeconds);
    await kernel.use("imageAccess")?.pullFor(p.owner, input.image); // refuses another owner's namespace now, not later
    const id = randomUUID();
    const slug = input.slug ?? `${input.name.slice(0, 33)}-${randomBytes(3).toString("hex")}`;
    try {
      const pod = await auditedTransaction(db, p, async (tx) => {
        await kernel.admit(tx, {
          owner: p.owner,
          accountId: p.accountId,
          kind: POD_KIND,
          size: size.id,
          image: input.image,
          gpu: size.gpu ? 1 : 0,
          features: input.volumes?.length ? ["volume"] : [],
          ...(opts.groupId && { shape: "pod-group", partOf: opts.groupId }),
        });
        // a group's members carry slugs of their own; a standalone pod may not take a live group's name
        if (
          !opts.groupId &&
          ((await repo.groupSlugTaken(tx, slug)) || (await kernel.appSlugTakenElsewhere(tx, slug, "pod_routes")))
        )
          throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
        const volumes = await checkVolumes(tx, p.owner, input.volumes ?? [], null);
        const where = { kind: "pod", owner: p.owner, size: size.id, gpu: !!size.gpu, ...external };
        const hostId = external
          ? await kernel.require("hosts").place(tx, where)
          : (volumes.hostId ?? (await kernel.require("hosts").place(tx, where)));
        const row: Parameters<typeof repo.insertPod>[1] = {
          id,
          ...ownerColumnsOf(p),
          name: input.name!,
          slug,
          group_id: opts.groupId ?? null,
          template_id: input.template ? ((input as { template_id?: string }).template_id ?? null) : null,
          linked_email: opts.linked?.email ?? null,
          linked_service: opts.linked?.service ?? null,
          image: input.image!,
          port: input.port ?? null,
          command: input.command ?? null,
          env_sealed: sealNewEnv(secrets, input, p, input.inherited_secrets),
          size: size.id,
          gpu: size.gpu,
          volumes: volumes.refs,
          databases: await resolveDatabases(tx, p.owner, input.databases ?? []),
          generation: 1,
          desired_state: "running",
          state: volumes.waiting ? "pending" : "creating",
          state_reason: volumes.waiting,
          paused_reason: null,
          host_id: hostId,
          address: null,
          network_address: null,
          serving_generation: null,
          restart_count: 0,
          crash_count: 0,
          next_restart_at: null,
          removed_at: null,
          checks: input.checks ?? null,
          stop_grace_seconds: input.deploy?.stop_grace_seconds ?? DEFAULT_STOP_GRACE_SECONDS,
          rollout_deadline_seconds: input.deploy?.deadline_seconds ?? DEFAULT_DEADLINE_SECONDS,
          idle_stop_seconds: opts.groupId ? null : (input.idle_stop_seconds ?? null),
        };
        await repo.insertPod(tx, row);
        await insertRelease(tx, id, row, { changed: [], description: "created", createdBy: p.accountId });
        await repo.recordRollout(tx, { id, generation: 1, image: row.image }, "create");
        return (await repo.podById(tx, id))!;
      });
      await kick(pod);
      return pod;
    } catch (err) {
      if (isUniqueViolation(err, "pods_slug_live")) throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
      throw err;
    }
  }

  const list = (p: Principal, filter: InstanceFilter) => repo.listPods(db, p.owner, filter);

  async function get(p: Principal, ref: string): Promise<repo.PodRow> {
    const pod = await repo.findPod(db, p.owner, ref);
    if (!pod || pod.linked_email) throw notFound("pod");
    return pod;
  }

  /** a spec change: admission (a new size like a creation, else as an update), then a new generation rolled out */
  async function update(
    p: Principal,
    ref: string,
    patch: PodPatch,
    opts: { description?: string } = {},
  ): Promise<repo.PodRow> {
    validateIdleStop(patch.idle_stop_seconds, idleMinSeconds);
    const { idle_stop_seconds: idleStop, ...spec } = patch;
    // scale-to-zero's setting alone is no deployment: no admission, no new generation, nothing rolled
    if (idleStop !== undefined && !Object.values(spec).some((v) => v !== undefined))
      return auditedTransaction(db, p, async (tx) => {
        const cur = await locked(tx, p, ref);
        if (cur.group_id) throw memberIdle();
        await setPodIdleStop(tx, cur.id, idleStop);
        return (await repo.podById(tx, cur.id))!;
      });
    await requireRuntime();
    const size = patch.size !== undefined ? sizeOf(patch.size) : null;
    if (patch.image !== undefined) await kernel.use("imageAccess")?.pullFor(p.owner, patch.image);
    const pod = await auditedTransaction(db, p, async (tx) => {
      const cur = await locked(tx, p, ref);
      if (idleStop !== undefined) {
        if (cur.group_id) throw memberIdle();
        await setPodIdleStop(tx, cur.id, idleStop);
      }
      validateChecks(
        patch.checks === undefined ? cur.checks : patch.checks,
        patch.port === undefined ? cur.port : patch.port,
      );
      // every spec change is a new deployment (deploy rules, department blocks); a new size is admitted like a creation
      const resized = !!size && size.id !== cur.size;
      await kernel.admit(tx, {
        owner: p.owner,
        accountId: p.accountId,
        kind: POD_KIND,
        size: resized ? size.id : cur.size,
        update: !resized,
        image: patch.image ?? cur.image,
        gpu: (resized ? size.gpu : cur.gpu) ? 1 : 0,
        ...(cur.group_id && { shape: "pod-group", partOf: cur.group_id }),
      });
      // a secret change is a spec change like env: a new generation, rolled out (src/apps/secrets/env.ts)
      const env =
        patch.env === undefined && patch.secret_env === undefined
          ? undefined
          : sealEnvDoc(secrets, applyEnvChange(secrets, readEnvDoc(secrets, cur.env_sealed), patch, setterOf(p)));
      const next = await repo.updatePodSpec(tx, cur.id, {
        image: patch.image,
        env_sealed: env,
        size: size?.id,
        gpu: size ? size.gpu : undefined,
        port: patch.port,
        command: patch.command,
        checks: patch.checks,
        stop_grace_seconds: patch.deploy?.stop_grace_seconds,
        rollout_deadline_seconds: patch.deploy?.deadline_seconds,
      });
      // a change of what runs is a numbered release (src/apps/releases); the rollout carries its number
      const changed = changedFields(cur, next, (row) => openEnv(secrets, row.env_sealed));
      if (changed.length)
        next.release = await insertRelease(tx, cur.id, next, {
          changed,
          description: opts.description ?? describeChange(changed),
          createdBy: p.accountId,
        });
      await repo.recordRollout(tx, next, opts.description ? "rollback" : "update");
      return next;
    });
    await kick(pod);
    return pod;
  }

  async function transition(p: Principal, ref: string, action: "start" | "stop" | "restart" | "delete") {
    if (action !== "delete" && action !== "stop") await requireRuntime();
    const pod = await auditedTransaction(db, p, (tx) => transitionIn(tx, p, ref, action));
    await kick(pod);
    return pod;
  }

  async function transitionIn(tx: pg.PoolClient, p: Principal, ref: string, action: string): Promise<repo.PodRow> {
    const cur = await locked(tx, p, ref);
    if (action === "delete") return repo.setDesired(tx, cur.id, "removed", { pausedReason: null });
    if (action === "stop") return repo.setDesired(tx, cur.id, "stopped", { pausedReason: null });
    if (cur.paused_reason)
      throw new ApiError("conflict", `The pod is held stopped by billing (${cur.paused_reason}); settle it first.`);
    if (action === "start") {
      if (cur.desired_state === "running") return cur;
      // a start runs the app again: concurrent-run limits (partner departments) and deploy blocks judge it
      await kernel.admit(tx, startAdmission(cur, p.owner, p.accountId));
      const next = await repo.setDesired(tx, cur.id, "running", { bump: true, state: "creating", reason: null });
      await repo.recordRollout(tx, next, "start");
      return next;
    }
    const next = await repo.setDesired(tx, cur.id, "running", { bump: true });
    await repo.recordRollout(tx, next, "restart");
    return next;
  }

  /** the serving (or newest) container of a pod on this host */
  async function containerOf(pod: repo.PodRow): Promise<string> {
    await requireRuntime();
    if (pod.host_id !== kernel.require("hosts").local.id)
      throw new ApiError(
        "host_unavailable",
        "The pod runs on another host; ask that host's API (logs and exec run where the pod is).",
      );
    const cs = await deps.runtime.list({ "platform.pod": pod.id });
    const serving = cs.find(
      (c) => c.labels["platform.generation"] === String(pod.serving_generation ?? pod.generation),
    );
    const pick =
      serving ??
      cs.sort((a, b) => Number(b.labels["platform.generation"]) - Number(a.labels["platform.generation"]))[0];
    if (!pick) throw new ApiError("not_running", "The pod has no container now (stopped, or waiting to restart).");
    return pick.name;
  }

  async function logs(pod: repo.PodRow, tail: number): Promise<string[]> {
    const { secret } = readEnvDoc(secrets, pod.env_sealed);
    return (await deps.runtime.logs(await containerOf(pod), tail)).map((line) => maskSecrets(line, secret));
  }

  async function exec(pod: repo.PodRow, command: string[], timeoutS: number) {
    if (pod.state !== "running") throw new ApiError("not_running", "exec needs a running pod.");
    const r = await deps.runtime.exec(await containerOf(pod), command, {
      timeoutMs: timeoutS * 1000,
      maxBytes: 64 * 1024,
    });
    const { secret } = readEnvDoc(secrets, pod.env_sealed);
    const stdout = maskSecrets(r.stdout, secret);
    const stderr = maskSecrets(r.stderr, secret);
    return { exit_code: r.exitCode, stdout, stderr, truncated: r.truncated, timed_out: r.timedOut };
  }

  /** the plain values only; secrets show as their fingerprints (secretEnvOf) */
  const envOf = (pod: repo.PodRow) => readEnvDoc(secrets, pod.env_sealed).plain;
  const secretEnvOf = (pod: repo.PodRow) => readEnvDoc(secrets, pod.env_sealed).meta;
  /** the secret_env of a change back to another sealed env (a release): its secrets, the pod's others removed */
  const secretsPatchFor = (pod: repo.PodRow, targetSealed: string) =>
    secretsPatchTo(secrets, pod.env_sealed, readEnvDoc(secrets, targetSealed).secret);

  /** a size by id without the host check (what an existing app holds) */
  const knownSize = (id: string) => podSizes(deps.gpuCatalogFile).find((s) => s.id === id) ?? null;

  return {
    create,
    list,
    get,
    update,
    transition,
    transitionIn,
    logs,
    exec,
    envOf,
    secretEnvOf,
    secretsPatchTo: secretsPatchFor,
    requireRuntime,
    kick,
    sizeOf,
    knownSize,
    idleMinSeconds,
  };
}

export type PodsService = ReturnType<typeof podsService>;
