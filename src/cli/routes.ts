import { Type } from "@sinclair/typebox";
import type { AppContext } from "../kernel/context.js";
import { Body } from "../http/schemas.js";
import { callerOf } from "../auth/principal.js";
import { MAX_REPORTS_PER_REQUEST, MAX_REQUEST_BYTES, recordCliErrors } from "./service.js";
import { route, type Route } from "../http/route.js";
import { noContentAfter } from "../http/no-content.js";

const Text = (max = 1000) => Type.Optional(Type.String({ maxLength: max }));
const Report = Type.Object(
  {
    occurred_at: Type.Optional(Type.String({ format: "date-time" })),
    kind: Text(100),
    cli_version: Text(50),
    os: Text(100),
    command: Text(500),
    flags: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }), Type.String({ maxLength: 2000 })]),
    ),
    status: Type.Optional(Type.Integer()),
    code: Text(100),
    cf_ray: Text(100),
    edge: Text(100),
    retries: Type.Optional(Type.Integer({ minimum: 0 })),
    message: Text(8000),
    api_host: Text(255),
  },
  { additionalProperties: false },
);

/** Client error reports: best-effort for the client, but bounded per request and per day. */
export function cliRoutes(ctx: AppContext): Route[] {
  return [
    route({
      method: "POST",
      url: "/v1/cli/errors",
      operationId: "reportCliErrors",
      tags: ["cli"],
      summary: "Record client error reports: at most 20 reports and 64 KB per request, 500 per user per 24 h.",
      summaryKo: "CLI 오류 보고(요청당 20건·64KB, 사용자당 24시간 500건).",
      auth: { token: true },
      errors: ["report_limit_exceeded"],
      body: Body({ reports: Type.Array(Report, { minItems: 1, maxItems: MAX_REPORTS_PER_REQUEST }) }),
      response: { 204: Type.Null() },
      options: { bodyLimit: MAX_REQUEST_BYTES },
      handler: async (request, reply) =>
        noContentAfter(reply, recordCliErrors(ctx.db, callerOf(request), request.body.reports)),
    }),
  ];
}
