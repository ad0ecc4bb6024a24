import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { ApiError } from "../http/errors.js";
import { Body } from "../http/schemas.js";
import { inTransaction } from "../store/db.js";

export const MAX_REPORTS_PER_REQUEST = 20;
export const MAX_REQUEST_BYTES = 64 * 1024;
export const MAX_REPORTS_PER_DAY = 500;

const Text = (max = 1000) => Type.Optional(Type.String({ maxLength: max }));
const Report = Type.Object({
  occurred_at: Type.Optional(Type.String({ format: "date-time" })),
  kind: Text(100), cli_version: Text(50), os: Text(100), command: Text(500), flags: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }), Type.String({ maxLength: 2000 })])),
  status: Type.Optional(Type.Integer()), code: Text(100), cf_ray: Text(100), edge: Text(100), retries: Type.Optional(Type.Integer({ minimum: 0 })),
  message: Text(8000), api_host: Text(255),
}, { additionalProperties: false });

/** Client error reports: best-effort for the client, but bounded per request and per day. */
export async function cliRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.post("/v1/cli/errors", {
    bodyLimit: MAX_REQUEST_BYTES,
    config: { auth: { token: true }, summaryKo: "CLI 오류 보고(요청당 20건·64KB, 사용자당 24시간 500건)." },
    schema: {
      operationId: "reportCliErrors", tags: ["cli"], summary: "Record client error reports: at most 20 reports and 64 KB per request, 500 per user per 24 h.",
      body: Body({ reports: Type.Array(Report, { minItems: 1, maxItems: MAX_REPORTS_PER_REQUEST }) }),
      response: { 204: Type.Null() },
    },
  }, async (request, reply) => {
    const p = request.principal!;
    const reports = request.body.reports;
    await inTransaction(ctx.db, async (tx) => {
      // serialise one account's reports so two concurrent requests cannot both slip under the daily limit
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('cli_errors:' || $1))", [p.accountId]);
      const { rows } = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM cli_error_reports WHERE account_id = $1 AND received_at > now() - interval '24 hours'",
        [p.accountId],
      );
      if (rows[0].n + reports.length > MAX_REPORTS_PER_DAY) {
        throw new ApiError("report_limit_exceeded", `At most ${MAX_REPORTS_PER_DAY} error reports per 24 hours; ${Math.max(0, MAX_REPORTS_PER_DAY - rows[0].n)} remain.`, { "retry-after": "3600" });
      }
      await tx.query(
        "INSERT INTO cli_error_reports (account_id, owner_kind, owner_id, token_id, report) SELECT $1, 'account', $1, $2, r FROM jsonb_array_elements($3::jsonb) r",
        [p.accountId, p.tokenId, JSON.stringify(reports)],
      );
    });
    return reply.code(204).send(null);
  });
}
