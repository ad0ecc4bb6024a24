import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { accountsService } from "../accounts/public.js";
import { fleetService } from "./service.js";

/** The operator API (beyond the spec): bearer OPERATOR_TOKEN only, never a user token. */
export async function operatorRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const accounts = accountsService(ctx.db, ctx.config, ctx.tokens);
  const fleet = fleetService(ctx.db);
  const operator = { operator: true } as const;

  r.post(
    "/v1/operator/accounts",
    {
      config: { auth: operator, errors: ["email_taken"] },
      schema: {
        operationId: "operatorCreateAccount",
        tags: ["operator"],
        summary: "Create an account (also when sign-up is closed); returns its first full-access token.",
        body: Body({
          email: Type.String({ format: "email", maxLength: 254 }),
          display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        }),
        response: { 201: Type.Object({ id: Type.String(), email: Type.String(), token: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { account, token } = await accounts.createAccount({
        email: request.body.email,
        password: null,
        displayName: request.body.display_name ?? null,
      });
      return reply.code(201).send({ id: account.id, email: account.email, token });
    },
  );

  r.get(
    "/v1/operator/fleet/patch-reports",
    {
      config: { auth: operator, errors: [] },
      schema: {
        operationId: "operatorListPatchReports",
        tags: ["operator"],
        summary: "Host patch reports, newest first.",
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })) }),
        response: {
          200: Type.Array(
            Type.Object({ id: Type.String(), host: Type.String(), report: Type.Unknown(), received_at: Timestamp }),
          ),
        },
      },
    },
    async (request) => fleet.list(request.query.limit ?? 100),
  );

  r.post(
    "/v1/fleet/patch-report",
    {
      config: { auth: { fleet: true }, errors: [], summaryKo: "운영자 전용 호스트 일일 패치 보고(FLEET_TOKEN)." },
      schema: {
        operationId: "reportFleetPatch",
        tags: ["meta"],
        summary: "Operator-only daily host patch report, authenticated by FLEET_TOKEN.",
        body: Body({
          host: Type.String({ minLength: 1, maxLength: 255 }),
          os: Type.Optional(Type.String({ maxLength: 200 })),
          kernel: Type.Optional(Type.String({ maxLength: 200 })),
          pending_updates: Type.Optional(Type.Integer({ minimum: 0 })),
          security_updates: Type.Optional(Type.Integer({ minimum: 0 })),
          reboot_required: Type.Optional(Type.Boolean()),
          packages: Type.Optional(
            Type.Array(
              Type.Object(
                { name: Type.String({ maxLength: 200 }), version: Type.String({ maxLength: 200 }) },
                { additionalProperties: false },
              ),
              { maxItems: 5000 },
            ),
          ),
          reported_at: Type.Optional(Nullable(Type.String({ format: "date-time" }))),
        }),
        response: { 202: Type.Object({ id: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { host, ...report } = request.body;
      return reply.code(202).send({ id: await fleet.record(host, report) });
    },
  );
}
