import { randomUUID } from "node:crypto";
import { defineArea } from "../kernel/area.js";
import { int } from "../config/config.js";
import { createRuntime, createVolumeStore } from "../runtime/index.js";
import type { RuntimeProvider } from "../runtime/provider.js";
import type { VolumeStore } from "../runtime/volumes.js";
import { podsService, type PodsService } from "./service.js";
import { PodWorker, podJobs } from "./jobs.js";
import { podLifecycle, podMetering } from "./metering.js";
import { podAttachments } from "./attachments.js";
import { podEdgeRoutes } from "./edge-source.js";
import { podRoutes } from "./routes/pods.js";
import { linkedRoutes } from "./routes/linked.js";
import { legacyRoutes } from "./routes/legacy.js";
import { linkedService } from "./linked-service.js";
import { legacyService } from "./legacy-service.js";
import { groupRoutes } from "./routes/groups.js";
import { groupsService, type GroupsService } from "./groups/service.js";
import { Autoscaler, autoscaleJobs } from "./groups/autoscaler.js";
import { findGroup } from "./groups/repo.js";
import * as repo from "./repo.js";
import { volumesService, type VolumesService } from "./volumes/service.js";
import { resumeVolumes, volumeJobs } from "./volumes/jobs.js";
import { volumeMetering } from "./volumes/metering.js";
import { findVolume } from "./volumes/repo.js";
import { volumeRoutes } from "./routes/volumes.js";
import { templatesService, type TemplatesService } from "./templates/service.js";
import { findTemplate } from "./templates/repo.js";
import { templateRoutes } from "./routes/templates.js";
import { appImages } from "./build-target.js";
import { appsOwned } from "./owned.js";
import { APPS_ERROR_CODES } from "./errors.js";
import { APPS_SCOPES } from "./scopes.js";
import { releaseRoutes } from "./releases/routes.js";
import { groupReleaseRoutes } from "./releases/group-routes.js";
import { releasesService } from "./releases/service.js";
import { CheckMonitor } from "./checks/monitor.js";
import { GroupRolloutDriver } from "./rollout/groups.js";
import { idleJobs, idleService, type IdleService } from "./idle/service.js";

export interface AppsConfig {
  appsDomain: string;
  edgePort: number;
  sweepMs: number;
  drainMs: number;
  healthTimeoutMs: number;
  maxCrashes: number;
  autoscaleMs: number;
  autoscaleCooldownMs: number;
  /** APPS_IDLE_MIN_SECONDS (60): the shortest idle_stop_seconds accepted (scale-to-zero, src/apps/README.md) */
  idleMinSeconds: number;
}

export interface AppsState {
  runtime: RuntimeProvider;
  volumes: VolumeStore;
  pods: PodsService;
  groups: GroupsService;
  autoscaler: Autoscaler;
  worker: PodWorker;
  volumeService: VolumesService;
  templates: TemplatesService;
  checks: CheckMonitor;
  groupRollouts: GroupRolloutDriver;
  idle: IdleService;
  config: AppsConfig;
}

/** Apps: pods, pod groups, volumes, templates on real containers (src/runtime; README "Apps"). */
export const appsArea = defineArea<AppsState, AppsConfig>({
  name: "apps",
  errors: APPS_ERROR_CODES,
  scopes: APPS_SCOPES,
  tags: [
    { name: "pods", description: "Container apps (pods) and autoscaled pod groups on real containers." },
    { name: "volumes", description: "Fixed-size volumes whose data outlives pod restarts and re-creation." },
    { name: "pod-templates", description: "Saved pod specs, deployed with POST /v1/pods {template}." },
    { name: "linked-apps", description: "Apps a linked service deployed on behalf of the account's e-mail user." },
  ],
  config: (env) => ({
    // apps are served at <slug>.<APPS_DOMAIN> by the edge on EDGE_PORT
    appsDomain: env.APPS_DOMAIN || `apps.${env.BASE_DOMAIN || "localhost"}`,
    edgePort: int(env, "EDGE_PORT", 8081, 0, 65535),
    sweepMs: int(env, "APPS_SWEEP_MS", 3000, 200, 600_000),
    // the old replica keeps serving this long after the new one is healthy, so every edge has switched
    drainMs: int(env, "APPS_DRAIN_MS", 2000, 0, 600_000),
    healthTimeoutMs: int(env, "APPS_HEALTH_TIMEOUT_MS", 60_000, 1000, 3_600_000),
    maxCrashes: int(env, "APPS_MAX_CRASHES", 5, 1, 100),
    // pod groups: how often each worker host samples its members' CPU, and how long a group waits to shrink
    autoscaleMs: int(env, "APPS_AUTOSCALE_MS", 15_000, 200, 600_000),
    autoscaleCooldownMs: int(env, "APPS_AUTOSCALE_COOLDOWN_MS", 60_000, 0, 3_600_000),
    idleMinSeconds: int(env, "APPS_IDLE_MIN_SECONDS", 60, 1, 86_400),
  }),
  setup: (p, config) => {
    const runtime = createRuntime(p.env);
    const volumes = createVolumeStore(p.config.dataDir);
    const hostId = p.kernel.require("hosts").local.id;
    const fallbackProcessId = randomUUID();
    const worker = new PodWorker(
      {
        db: p.db,
        runtime,
        volumes,
        kernel: p.kernel,
        secrets: p.secrets,
        hostId,
        gpuCatalogFile: p.config.gpuCatalogFile,
        // the databases area's job (src/databases/attachments.ts): allowlists admit the owner's new subnet
        // before the lease is held (start-up) a random id: its claims look abandoned to others, which is safe (idempotent steps)
        processId: () => p.kernel.require("hosts").leaseId() ?? fallbackProcessId,
        networkChanged: (owner) => void p.jobs.send("databases.owner-networks", { owner }).catch(() => null),
        log: p.log,
        drainMs: config.drainMs,
        healthTimeoutMs: config.healthTimeoutMs,
        maxCrashes: config.maxCrashes,
      },
      p.jobs,
      config.sweepMs,
    );
    const pods = podsService({
      db: p.db,
      secrets: p.secrets,
      kernel: p.kernel,
      jobs: p.jobs,
      runtime,
      gpuCatalogFile: p.config.gpuCatalogFile,
      idleMinSeconds: config.idleMinSeconds,
    });
    const groups = groupsService({ db: p.db, secrets: p.secrets, kernel: p.kernel, pods });
    const autoscaler = new Autoscaler({
      db: p.db,
      runtime,
      groups,
      hostId,
      gpuCatalogFile: p.config.gpuCatalogFile,
      log: p.log,
      intervalMs: config.autoscaleMs,
      cooldownMs: config.autoscaleCooldownMs,
    });
    p.kernel.provide("attachments", podAttachments(p.jobs));
    p.kernel.contribute("edgeRoutes", podEdgeRoutes());
    // scale-to-zero: the edge wakes idle-stopped apps through this (src/edge/wake.ts)
    const idle = idleService({ db: p.db, kernel: p.kernel, pods, log: p.log });
    p.kernel.provide("edgeWake", (target) => idle.wake(target));
    p.kernel.provide("appImages", appImages(pods, groups, p.secrets));
    for (const source of appsOwned()) p.kernel.contribute("owned", source, source.kind);
    const volumeService = volumesService({ db: p.db, kernel: p.kernel, jobs: p.jobs, store: volumes });
    const templates = templatesService({
      db: p.db,
      secrets: p.secrets,
      kernel: p.kernel,
      gpuCatalogFile: p.config.gpuCatalogFile,
    });
    const checks = new CheckMonitor({
      db: p.db,
      runtime,
      hostId,
      log: p.log,
      secrets: p.secrets,
      reconcile: worker.reconcile,
    });
    const groupRollouts = new GroupRolloutDriver({ db: p.db, secrets: p.secrets, pods, log: p.log }, config.sweepMs);
    return {
      runtime,
      volumes,
      pods,
      groups,
      autoscaler,
      worker,
      volumeService,
      templates,
      checks,
      groupRollouts,
      idle,
      config,
    };
  },
  routes: (_app, p, s) => {
    const deps = { pods: s.pods, urls: { appsDomain: s.config.appsDomain, edgePort: s.config.edgePort } };
    return [
      ...podRoutes(deps),
      ...releaseRoutes(deps, releasesService({ db: p.db, pods: s.pods })),
      ...groupRoutes({ groups: s.groups, urls: deps.urls }),
      ...groupReleaseRoutes({ db: p.db, groups: s.groups, urls: deps.urls }),
      ...linkedRoutes(deps, linkedService({ db: p.db, pods: s.pods, runtime: s.runtime })),
      ...legacyRoutes(legacyService({ db: p.db, runtime: s.runtime, hostId: p.kernel.require("hosts").local.id })),
      ...volumeRoutes({ volumes: s.volumeService }),
      ...templateRoutes({ templates: s.templates }),
    ];
  },
  jobs: (p, s) => [
    ...podJobs(s.worker),
    ...autoscaleJobs(s.autoscaler),
    ...idleJobs(s.idle),
    ...volumeJobs({ db: p.db, store: s.volumes, hostId: p.kernel.require("hosts").local.id, log: p.log, jobs: p.jobs }),
  ],
  metering: () => [podMetering(), volumeMetering()],
  lifecycle: (p) =>
    podLifecycle({
      jobs: p.jobs,
      isExternal: async (q, id) => !!(await p.kernel.use("externalHosts")?.isExternal(q, id)),
    }),
  instances: (p) => [
    {
      resource: "pods",
      find: async (owner, ref) => {
        const pod = await repo.findPod(p.db, owner, ref);
        if (!pod) {
          // a group is a pods instance too (its id covers its members)
          const group = await findGroup(p.db, owner, ref);
          return group && { id: group.id, slug: group.slug, kind: "group", accountId: group.account_id };
        }
        const group = pod.group_id ? await repo.groupRefs(p.db, pod.group_id) : [];
        return { id: pod.id, slug: pod.slug, covers: group, kind: "pod", accountId: pod.account_id };
      },
    },
    {
      resource: "volumes",
      find: async (owner, ref) => {
        const v = await findVolume(p.db, owner, ref);
        return v && { id: v.id, slug: v.name, accountId: v.account_id };
      },
    },
    {
      resource: "pod-templates",
      find: async (owner, ref) => {
        const t = await findTemplate(p.db, owner, ref);
        return t && { id: t.id, slug: t.name, accountId: t.account_id };
      },
    },
  ],
  // adopt what runs already (a restart never starts a duplicate), then keep watching
  start: async (p, s) => {
    if (!p.kernel.require("hosts").local.roles.includes("worker")) return;
    await resumeVolumes(p.db, p.jobs, p.kernel.require("hosts").local.id);
    if (await s.runtime.unavailable()) return;
    const started = Date.now();
    await s.worker
      .sweep()
      .then((r) =>
        p.log.info({ ...r, ms: Date.now() - started }, "pods adopted: the host's containers match the store"),
      )
      .catch((err) => p.log.error({ err }, "start-up pod sweep failed; the periodic sweep retries"));
    s.worker.start();
    s.autoscaler.start();
    s.checks.start();
    s.groupRollouts.start();
  },
  stop: async (_p, s) => {
    s.checks.stop();
    s.groupRollouts.stop();
    await s.autoscaler.stop();
    await s.worker.stop();
  },
});
