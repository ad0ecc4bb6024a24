import { Type } from "@sinclair/typebox";
import { callerOf } from "../auth/principal.js";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import { resourceRoutes } from "../http/resource-routes.js";
import type { CronService } from "./service.js";
import type { CronJobRow, CronRunRow } from "./repo.js";
import { CRON_SIZES } from "./sizes.js";

const tags = ["cron-jobs"];
const read = { scope: "cron-jobs:read", instance: { param: "id" } } as const;
const write = { scope: "cron-jobs:write", instance: { param: "id" } } as const;
const NAME = "^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$";
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "id or name" }) });
const RunParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: "id or name" }),
  run_id: Type.String({ minLength: 1, maxLength: 64 }),
});

const Policy = Type.Union([Type.Literal("forbid"), Type.Literal("replace"), Type.Literal("allow")], {
  description:
    "a run due while one is going: forbid skips it (recorded skipped), replace stops the old one, allow runs both",
});
const fields = {
  image: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: "^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$" })),
  pod: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "a pod (id or slug) whose current release the job runs: its image, env and secrets",
    }),
  ),
  command: Type.Array(Type.String({ maxLength: 4096 }), { minItems: 1, maxItems: 64 }),
  env: Type.Optional(
    Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$" }), Type.String({ maxLength: 32768 }), {
      additionalProperties: false,
    }),
  ),
  secret_env: Type.Optional(
    Type.Record(
      Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$" }),
      Nullable(Type.String({ minLength: 1, maxLength: 32768 })),
      {
        additionalProperties: false,
        maxProperties: 128,
        description:
          "secret env: sealed at rest, never shown again (only a fingerprint), masked in run logs; on a change, given names are set, null removes one, others stay",
      },
    ),
  ),
  schedule: Type.String({
    minLength: 1,
    maxLength: 120,
    description: 'cron syntax: "*/5 * * * *" (minute hour day month weekday), or @hourly, @daily ...',
  }),
  time_zone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "IANA time zone, default UTC" })),
  concurrency_policy: Type.Optional(Policy),
  deadline_seconds: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 86_400, description: "a run still going after this is stopped (failed)" }),
  ),
  size: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: CRON_SIZES.join(", ") })),
  suspended: Type.Optional(Type.Boolean()),
};

const SecretView = Type.Record(
  Type.String(),
  Type.Object({ fingerprint: Type.String(), set_by: Type.String(), set_at: Type.String({ format: "date-time" }) }),
  { description: "secret env names with fingerprints (HMAC-SHA256); values are never returned" },
);

const CronJob = Type.Object({
  id: Type.String(),
  name: Type.String(),
  image: Type.String(),
  source_pod_id: Nullable(Type.String()),
  command: Type.Array(Type.String()),
  env: Type.Record(Type.String(), Type.String()),
  secret_env: SecretView,
  release: Nullable(
    Type.Object(
      {
        pod_id: Nullable(Type.String()),
        number: Type.Integer(),
        env: Type.Record(Type.String(), Type.String()),
        secret_env: SecretView,
      },
      { description: "the pod release the job took (image, env, secrets); the job's own env and secret_env win" },
    ),
  ),
  schedule: Type.String(),
  time_zone: Type.String(),
  concurrency_policy: Type.String(),
  deadline_seconds: Type.Integer(),
  size: Type.String(),
  suspended: Type.Boolean(),
  next_run_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const CronRun = Type.Object({
  id: Type.String(),
  job_id: Type.String(),
  trigger: Type.String({ description: "schedule or manual" }),
  scheduled_at: Timestamp,
  state: Type.String({ description: "running, succeeded, failed, skipped, missed, refused or cancelled" }),
  reason: Nullable(Type.String()),
  exit_code: Nullable(Type.Integer()),
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  duration_ms: Nullable(Type.Integer()),
  host_id: Nullable(Type.String()),
});

const runView = (r: CronRunRow) => ({
  id: r.id,
  job_id: r.job_id,
  trigger: r.trigger,
  scheduled_at: r.scheduled_at.toISOString(),
  state: r.state,
  reason: r.reason,
  exit_code: r.exit_code,
  started_at: r.started_at?.toISOString() ?? null,
  finished_at: r.finished_at?.toISOString() ?? null,
  duration_ms: r.started_at && r.finished_at ? r.finished_at.getTime() - r.started_at.getTime() : null,
  host_id: r.host_id,
});

const ERRORS = [
  "bad_slug",
  "bad_schedule",
  "bad_size",
  "bad_image",
  "image_forbidden",
  "slug_taken",
  "not_found",
] as const;

/** Cron jobs: CRUD, runs with their logs, run now. */
export function cronRoutes(svc: CronService): Route[] {
  const view = (j: CronJobRow) => ({
    id: j.id,
    name: j.name,
    image: j.image,
    source_pod_id: j.source_pod_id,
    command: j.command,
    env: svc.envOf(j),
    secret_env: svc.secretEnvOf(j),
    release: svc.releaseOf(j),
    schedule: j.schedule,
    time_zone: j.time_zone,
    concurrency_policy: j.concurrency_policy,
    deadline_seconds: j.deadline_seconds,
    size: j.size,
    suspended: j.suspended,
    next_run_at: j.next_run_at?.toISOString() ?? null,
    created_at: j.created_at.toISOString(),
    updated_at: j.updated_at.toISOString(),
  });
  return [
    ...resourceRoutes({
      name: "CronJob",
      url: "/v1/cron-jobs",
      tags,
      params: Params,
      scope: "cron-jobs",
      instances: true,
      schema: CronJob,
      view,
      service: svc,
      create: {
        summary:
          "Run a command on a schedule (cron syntax in a time zone), in an image or a pod's current image, to completion (201).",
        summaryKo: "일정(크론)에 따라 명령을 실행하는 작업을 만듭니다.",
        admits: true,
        errors: [...ERRORS],
        validationCodes: { "/name": "bad_slug", "/image": "bad_image" },
        body: Body({ name: Type.String({ pattern: NAME, minLength: 3, maxLength: 40 }), ...fields }),
      },
      list: { summary: "The caller's cron jobs; instance-limited keys see theirs.", summaryKo: "크론 작업 목록." },
      get: { summary: "One cron job by id or name, with its next scheduled run.", summaryKo: "크론 작업 하나." },
      update: {
        summary:
          "Change the schedule, command, image, policy, deadline, size or suspend it; a new schedule counts from now.",
        summaryKo: "크론 작업을 바꿉니다.",
        admits: true,
        errors: [...ERRORS],
        validationCodes: { "/image": "bad_image" },
        body: Body({
          ...fields,
          command: Type.Optional(fields.command),
          schedule: Type.Optional(fields.schedule),
        }),
      },
      remove: {
        summary: "Delete the cron job; a run still going is stopped.",
        summaryKo: "크론 작업을 지웁니다.",
        status: 200,
      },
    }),
    route({
      method: "GET",
      url: "/v1/cron-jobs/:id/runs",
      operationId: "listCronRuns",
      tags,
      summary: "The job's runs, newest first (a bounded history): state, exit code, duration, why.",
      summaryKo: "크론 작업의 실행 기록.",
      auth: read,
      params: Params,
      query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })) }),
      response: { 200: Type.Array(CronRun) },
      handler: async (request) =>
        (await svc.runs(callerOf(request), request.params.id, request.query.limit ?? 20)).map(runView),
    }),
    route({
      method: "GET",
      url: "/v1/cron-jobs/:id/runs/:run_id/logs",
      operationId: "getCronRunLogs",
      tags,
      summary: "A run's output (its last 1000 lines, 64 KiB), kept with the run once it ended.",
      summaryKo: "크론 실행 하나의 로그.",
      auth: read,
      params: RunParams,
      response: { 200: Type.Object({ run: CronRun, lines: Type.Array(Type.String()) }) },
      handler: async (request) => {
        const r = await svc.run(callerOf(request), request.params.id, request.params.run_id);
        return { run: runView(r), lines: r.logs ? r.logs.split("\n") : [] };
      },
    }),
    route({
      method: "POST",
      url: "/v1/cron-jobs/:id/run",
      operationId: "runCronJob",
      tags,
      summary: "Run the job now (202), under its concurrency policy and admission; the run's state says how it went.",
      summaryKo: "크론 작업을 지금 실행합니다.",
      auth: write,
      admits: true,
      errors: ["not_found", "runtime_unavailable"],
      params: Params,
      response: { 202: CronRun },
      handler: async (request, reply) =>
        reply.code(202).send(runView(await svc.runNow(callerOf(request), request.params.id))),
    }),
  ];
}
