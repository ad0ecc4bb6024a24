import { randomBytes, randomUUID } from "node:crypto";
import { ownerColumnsOf } from "../../kernel/owner.js";
import { isUniqueViolation, type Db } from "../../store/db.js";
import { ApiError, asApiError, found, notFound } from "../../http/errors.js";
import type { InstanceFilter, Principal } from "../../auth/principal.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { auditedTransaction } from "../../audit/record.js";
import type { PodsService } from "../service.js";
import type { PodRow } from "../repo.js";
import type { PodInput } from "../types.js";
import { validateChecks } from "../checks/spec.js";
import { advanceGroupRollout } from "../rollout/groups.js";
import { insertGroupRelease } from "../releases/group-repo.js";
import { describeChange, groupChangedFields } from "../releases/changes.js";
import { setGroupRollout } from "../rollout/repo.js";
import { openEnv } from "../container-spec.js";
import type { Static } from "@sinclair/typebox";
import type { GroupCreateBody, GroupPatchBody } from "../routes/bodies.js";
import { applyEnvChange, readEnvDoc, sealEnvDoc, sealNewEnv, setterOf } from "../secrets/env.js";
import { DEFAULT_POD_SIZE, POD_KIND } from "../sizes.js";
import * as repo from "./repo.js";
import { groupAdmission } from "./admission.js";
import { validateIdleStop } from "../idle/validate.js";

/** A group as POST /v1/pod-groups takes it. */
export type GroupInput = Static<typeof GroupCreateBody>;

/** What PATCH /v1/pod-groups/{id} may change. */
export type GroupPatch = Static<typeof GroupPatchBody>;

export interface GroupsDeps {
  db: Db;
  secrets: SecretBox;
  kernel: Pick<Kernel, "admit" | "use" | "appSlugTakenElsewhere">;
  pods: PodsService;
}

/** what organization deploy rules look at in a group: its image, GPUs at replica_max, replicas, autoscaling */
const groupRules = (image: string, gpu: string | null | undefined, min: number, max: number) => ({
  shape: "pod-group",
  image,
  gpu: gpu ? max : 0,
  replicas: max,
  features: max > min ? ["autoscale"] : [],
});

export const DEFAULT_TARGET_CPU = 70;
const REPLICA_CEILING = 20;

/** A group with its live members, as every read answers it. */
export interface GroupWithMembers {
  group: repo.GroupRow;
  members: PodRow[];
}

function checkBounds(min: number, max: number): void {
  if (min < 1 || max > REPLICA_CEILING || max < min)
    throw new ApiError(
      "invalid_request",
      `replica_min (${min}) and replica_max (${max}) must satisfy 1 <= replica_min <= replica_max <= ${REPLICA_CEILING}.`,
    );
}

/**
 * Pod groups: replicas of one spec between replica_min and replica_max. Members are ordinary pods made
 * through the pods service (admission, placement, the reconciler, metering); the group keeps their spec,
 * the bounds and the number the autoscaler decided (desired_replicas), and converges its members to it.
 */
export function groupsService(deps: GroupsDeps) {
  const { db, secrets, kernel, pods } = deps;

  const memberInput = (g: repo.GroupRow, doc = readEnvDoc(secrets, g.spec.env_sealed)): PodInput => ({
    name: g.name,
    // members are reached through the group's name; their own slug says whose they are
    slug: `${g.slug.slice(0, 33)}-${randomBytes(3).toString("hex")}`,
    image: g.spec.image,
    port: g.spec.port,
    command: g.spec.command,
    env: doc.plain,
    inherited_secrets: doc,
    size: g.spec.size,
    databases: g.spec.databases,
    checks: g.spec.checks ?? null,
    deploy: g.spec.deploy && {
      stop_grace_seconds: g.spec.deploy.stop_grace_seconds,
      deadline_seconds: g.spec.deploy.deadline_seconds,
    },
  });

  /** which member goes first when the group shrinks: one not serving, then the newest */
  const removalOrder = (members: PodRow[]) =>
    [...members].sort(
      (a, b) =>
        Number(a.state === "running") - Number(b.state === "running") ||
        b.created_at.getTime() - a.created_at.getTime(),
    );

  /**
   * Makes the live members as many as desired_replicas (none for a removed group): missing ones are
   * created (each through admission), extra ones removed. The caller holds the group's lock; the row is
   * read again under it, so a decision made meanwhile is what counts. Returns the members now.
   */
  async function convergeHeld(p: Principal, groupId: string): Promise<PodRow[]> {
    const g = await repo.groupById(db, groupId);
    if (!g) return [];
    const target = g.desired_state === "removed" ? 0 : g.desired_replicas;
    const members = await repo.membersOf(db, g.id);
    for (let i = members.length; i < target; i++) members.push(await pods.create(p, memberInput(g), { groupId: g.id }));
    if (members.length > target) {
      const extra = removalOrder(members).slice(0, members.length - target);
      for (const m of extra) await pods.transition(p, m.id, "delete");
      return members.filter((m) => !extra.includes(m));
    }
    return members;
  }

  const converge = async (p: Principal, groupId: string): Promise<PodRow[]> =>
    (await repo.withGroupLock(db, groupId, true, () => convergeHeld(p, groupId)))!;

  async function live(p: Principal, ref: string): Promise<repo.GroupRow> {
    const g = await repo.findGroup(db, p.owner, ref);
    if (!g || g.desired_state === "removed") throw notFound("pod group");
    return g;
  }

  async function create(p: Principal, input: GroupInput): Promise<GroupWithMembers> {
    await pods.requireRuntime();
    checkBounds(input.replica_min, input.replica_max);
    validateChecks(input.checks, input.port);
    validateIdleStop(input.idle_stop_seconds, pods.idleMinSeconds);
    const size = pods.sizeOf(input.size ?? DEFAULT_POD_SIZE);
    await kernel.use("imageAccess")?.pullFor(p.owner, input.image);
    // refused before anything is recorded (every member is admitted again as it is created)
    await kernel.admit(db, {
      owner: p.owner,
      accountId: p.accountId,
      kind: POD_KIND,
      size: size.id,
      ...groupRules(input.image, size.gpu, input.replica_min, input.replica_max),
    });
    const slug = input.slug ?? `${input.name.slice(0, 33)}-${randomBytes(3).toString("hex")}`;
    if (await repo.podSlugTaken(db, slug)) throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
    const id = randomUUID();
    const insert = () =>
      auditedTransaction(db, p, async (tx) => {
        if (await kernel.appSlugTakenElsewhere(tx, slug, "pod_routes"))
          throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
        const made = await repo.insertGroup(tx, {
          id,
          ...ownerColumnsOf(p),
          name: input.name,
          slug,
          spec: {
            image: input.image,
            port: input.port ?? null,
            command: input.command ?? null,
            env_sealed: sealNewEnv(secrets, input, p),
            size: size.id,
            databases: input.databases ?? [],
            checks: input.checks ?? null,
            deploy: input.deploy ?? {},
          },
          replica_min: input.replica_min,
          replica_max: input.replica_max,
          target_cpu_percent: input.target_cpu_percent ?? DEFAULT_TARGET_CPU,
          desired_replicas: input.replica_min,
          desired_state: "running",
          scale_hold: null,
          last_scaled_at: null,
          idle_stop_seconds: input.idle_stop_seconds ?? null,
        });
        await insertGroupRelease(tx, id, made.spec, {
          changed: [],
          description: "created",
          createdBy: p.accountId,
          outcome: "serving",
        });
        return made;
      });
    let inserted: string | null = null;
    try {
      // the group's lock from before it exists: the autoscaler never makes its first members beside us
      return (await repo.withGroupLock(db, id, true, async () => {
        const group = await insert();
        inserted = group.id;
        // a retry of an Idempotency-Key gets the group its first attempt made (http/idempotent-change.ts):
        // its missing members are made under that group's own lock
        const members = group.id === id ? await convergeHeld(p, id) : await converge(p, group.id);
        return { group, members };
      }))!;
    } catch (err) {
      if (isUniqueViolation(err, "pod_groups_slug_live"))
        throw new ApiError("slug_taken", `The slug "${slug}" is in use.`);
      // a member refused (a database that is not there, funds gone meanwhile): the group is not left half made
      if (inserted) await removeIn(p, inserted).catch(() => null);
      throw err;
    }
  }

  async function list(p: Principal, filter: InstanceFilter): Promise<GroupWithMembers[]> {
    const groups = await repo.listGroups(db, p.owner, filter);
    const members = await repo.membersOfMany(
      db,
      groups.map((g) => g.id),
    );
    return groups.map((g) => ({ group: g, members: members.get(g.id) ?? [] }));
  }

  async function get(p: Principal, ref: string): Promise<GroupWithMembers> {
    const g = found(await repo.findGroup(db, p.owner, ref), "pod group");
    return { group: g, members: g.desired_state === "removed" ? [] : await repo.membersOf(db, g.id) };
  }

  /** bounds and target change the group only; a spec change rolls every member (a rolling update each) */
  /**
   * `restore`: a rollback puts the members' spec of an earlier release back whole (env and secrets included), as a
   * new release described as the rollback, through the same admission and batch rollout as any change.
   */
  async function update(
    p: Principal,
    ref: string,
    patch: GroupPatch,
    restore?: { spec: repo.GroupSpec; description: string },
  ): Promise<GroupWithMembers> {
    if (restore) patch = { ...patch, size: restore.spec.size, image: restore.spec.image };
    const specChange =
      !!restore ||
      patch.image !== undefined ||
      patch.env !== undefined ||
      patch.secret_env !== undefined ||
      patch.size !== undefined ||
      patch.port !== undefined ||
      patch.command !== undefined ||
      patch.checks !== undefined ||
      patch.deploy !== undefined;
    validateIdleStop(patch.idle_stop_seconds, pods.idleMinSeconds);
    if (specChange) await pods.requireRuntime();
    const size = patch.size !== undefined ? pods.sizeOf(patch.size) : null;
    if (patch.image !== undefined) await kernel.use("imageAccess")?.pullFor(p.owner, patch.image);
    const group = await auditedTransaction(db, p, async (tx) => {
      const cur = await repo.findGroup(tx, p.owner, ref, { forUpdate: true });
      if (!cur || cur.desired_state === "removed") throw notFound("pod group");
      const min = patch.replica_min ?? cur.replica_min;
      const max = patch.replica_max ?? cur.replica_max;
      checkBounds(min, max);
      const checks = patch.checks !== undefined ? patch.checks : cur.spec.checks;
      validateChecks(checks, patch.port !== undefined ? patch.port : cur.spec.port);
      // every change is admitted (deploy rules, department blocks); a new size like a creation, the rest as an update
      const resized = !!size && size.id !== cur.spec.size;
      await kernel.admit(tx, {
        owner: p.owner,
        accountId: p.accountId,
        kind: POD_KIND,
        size: resized ? size.id : cur.spec.size,
        update: !resized,
        ...groupRules(patch.image ?? cur.spec.image, (size ?? pods.knownSize(cur.spec.size))?.gpu, min, max),
      });
      // a spec change rolls the members a batch at a time (src/apps/rollout/groups.ts), from the group's row
      if (specChange)
        await setGroupRollout(tx, cur.id, {
          state: "rolling",
          reason: null,
          started_at: new Date().toISOString(),
          previous_spec: cur.spec,
        });
      const spec: repo.GroupSpec | undefined = restore
        ? { ...restore.spec, databases: cur.spec.databases }
        : specChange
          ? {
              image: patch.image ?? cur.spec.image,
              port: patch.port !== undefined ? patch.port : cur.spec.port,
              command: patch.command !== undefined ? patch.command : cur.spec.command,
              env_sealed:
                patch.env !== undefined || patch.secret_env !== undefined
                  ? sealEnvDoc(
                      secrets,
                      applyEnvChange(secrets, readEnvDoc(secrets, cur.spec.env_sealed), patch, setterOf(p)),
                    )
                  : cur.spec.env_sealed,
              size: size?.id ?? cur.spec.size,
              databases: cur.spec.databases,
              checks: patch.checks !== undefined ? patch.checks : (cur.spec.checks ?? null),
              deploy: { ...cur.spec.deploy, ...patch.deploy },
            }
          : undefined;
      // every change of what the members run is a numbered release (src/apps/releases), pending until rolled out
      const changed = spec ? groupChangedFields(cur.spec, spec, (sealed) => openEnv(secrets, sealed)) : [];
      if (spec && (changed.length || restore))
        await insertGroupRelease(tx, cur.id, spec, {
          changed,
          description: restore?.description ?? describeChange(changed),
          createdBy: p.accountId,
          outcome: "pending",
        });
      return repo.updateGroup(tx, cur.id, {
        replica_min: min,
        replica_max: max,
        target_cpu_percent: patch.target_cpu_percent,
        idle_stop_seconds: patch.idle_stop_seconds,
        desired_replicas: Math.min(max, Math.max(min, cur.desired_replicas)),
        spec,
      });
    });
    if (specChange) await advanceGroupRollout({ db, secrets, pods }, group.id);
    return { group, members: await converge(p, group.id) };
  }

  /** the group and its members go in one transaction; the members' hosts then remove the containers */
  async function removeIn(p: Principal, groupId: string): Promise<GroupWithMembers> {
    const tx = (fn: () => Promise<GroupWithMembers>) => repo.withGroupLock(db, groupId, true, fn);
    const done = (await tx(() => removeHeld(p, groupId)))!;
    for (const m of done.members) await pods.kick(m);
    return done;
  }

  function removeHeld(p: Principal, groupId: string): Promise<GroupWithMembers> {
    return auditedTransaction(db, p, async (tx) => {
      const cur = found(await repo.groupById(tx, groupId, { forUpdate: true }), "pod group");
      const removed: PodRow[] = [];
      for (const m of await repo.membersOf(tx, cur.id)) removed.push(await pods.transitionIn(tx, p, m.id, "delete"));
      return { group: await repo.updateGroup(tx, cur.id, { desired_state: "removed" }), members: removed };
    });
  }

  async function remove(p: Principal, ref: string): Promise<GroupWithMembers> {
    return removeIn(p, (await live(p, ref)).id);
  }

  /**
   * Whether the group may grow by one member now: admission with `growth` (funds, the account and app
   * spend caps). Null when admitted, else the refusal's message (what scale_hold shows).
   */
  async function growthRefusal(g: repo.GroupRow): Promise<string | null> {
    try {
      await kernel.admit(
        db,
        groupAdmission(g, { growth: true, resourceId: g.id, meteredIds: await repo.everMemberIds(db, g.id) }),
      );
      return null;
    } catch (err) {
      const api = asApiError(err);
      if (!api) throw err;
      return `${api.code}: ${api.message}`;
    }
  }

  const envOf = (g: repo.GroupRow) => readEnvDoc(secrets, g.spec.env_sealed).plain;
  const secretEnvOf = (g: repo.GroupRow) => readEnvDoc(secrets, g.spec.env_sealed).meta;

  return { create, list, get, update, remove, converge, convergeHeld, growthRefusal, envOf, secretEnvOf };
}

export type GroupsService = ReturnType<typeof groupsService>;
