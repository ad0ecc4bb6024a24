import type { AreaModule } from "./context.js";
import type { Infra, Platform } from "./context.js";
import { Kernel } from "./kernel.js";
import { OwnerChangeFeed } from "./change-feed.js";
import { registerSecretKey } from "./secrets.js";
import { infraHealth } from "./infra-health.js";
import { createMailer } from "../mail/mailer.js";
import { declareAreas } from "./declarations.js";

/**
 * Builds the platform from its infrastructure and the list of areas (src/areas.ts): each area's
 * settings and state, its jobs (periodic ones scheduled), metering source, lifecycle hooks, admission
 * check and instance lookup. Nothing here names an area.
 */
export async function createPlatform(infra: Infra, areas: readonly AreaModule<any, any>[]): Promise<Platform> {
  declareAreas(areas); // error codes and scope resources first: a duplicate stops start-up before anything runs
  const states = new Map<string, unknown>();
  const platform: Platform = {
    ...infra,
    kernel: new Kernel(),
    changes: new OwnerChangeFeed(infra.databaseUrl, infra.log),
    areas,
    schedules: [],
    health: infraHealth(infra),
    state: <S>(name: string) => {
      if (!states.has(name)) throw new Error(`no area named ${name}`);
      return states.get(name) as S;
    },
  };
  // settings first, so one bad variable stops start-up before anything is built
  const configs = areas.map((area) => area.config?.(infra.env));
  platform.kernel.setMailer(createMailer(infra.env, infra.log));
  await registerSecretKey(infra.db, infra.secrets);
  await platform.changes.start();
  for (const [i, area] of areas.entries()) states.set(area.name, await area.setup?.(platform, configs[i]));
  for (const area of areas) {
    const state = states.get(area.name);
    for (const job of area.jobs?.(platform, state) ?? []) {
      infra.jobs.define(job);
      if (job.cron) platform.schedules.push({ name: job.name, cron: job.cron });
    }
    for (const source of [area.metering?.(platform, state) ?? []].flat()) platform.kernel.addMetering(source);
    if (area.lifecycle) platform.kernel.addLifecycle(area.name, area.lifecycle(platform, state));
    if (area.admission) platform.kernel.addAdmission(area.admission(platform, state));
    for (const lookup of [area.instances?.(platform, state) ?? []].flat()) platform.kernel.addInstances(lookup);
    for (const [name, check] of Object.entries(area.health?.(platform, state) ?? {})) platform.health.set(name, check);
  }
  return platform;
}

/** Runs the job workers (and the schedule, unless a test leaves it out), then every area's start hook. */
export async function startPlatform(platform: Platform, opts: { schedule?: boolean } = {}): Promise<void> {
  await platform.jobs.start(opts.schedule === false ? [] : platform.schedules);
  for (const area of platform.areas) await area.start?.(platform, platform.state(area.name));
}

/** Stops the workers, then every area's stop hook (in reverse order). */
export async function stopPlatform(platform: Platform): Promise<void> {
  await platform.jobs.stop();
  await platform.changes.close();
  for (const area of [...platform.areas].reverse()) await area.stop?.(platform, platform.state(area.name));
}
