import { Type } from "@sinclair/typebox";
import type { AppContext } from "../kernel/context.js";
import { Body, Nullable, Timestamp } from "../http/schemas.js";
import { accountsService } from "../accounts/public.js";
import { fleetService } from "./service.js";
import { route, type Route } from "../http/route.js";

/** The operator API (beyond the spec): bearer OPERATOR_TOKEN only, never a user token. */
export function operatorRoutes(ctx: AppContext): Route[] {
  const accounts = accountsService(ctx.db, ctx.config, ctx.tokens);
  const fleet = fleetService(ctx.db);
  const operator = { operator: true } as const;

  return [
    route({
      method: "POST",
      url: "/v1/operator/accounts",
      operationId: "operatorCreateAccount",
      tags: ["operator"],
      summary: "Create an account (also when sign-up is closed); returns its first full-access token.",
      auth: operator,
      errors: ["email_taken"],
      body: Body({
        email: Type.String({ format: "email", maxLength: 254 }),
        display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      }),
      response: { 201: Type.Object({ id: Type.String(), email: Type.String(), token: Type.String() }) },
      handler: async (request, reply) => {
        const { account, token } = await accounts.createAccount({
          email: request.body.email,
          password: null,
          displayName: request.body.display_name ?? null,
        });
        return reply.code(201).send({ id: account.id, email: account.email, token });
      },
    }),
    route({
      method: "GET",
      url: "/v1/operator/fleet/patch-reports",
      operationId: "operatorListPatchReports",
      tags: ["operator"],
      summary: "Host patch reports, newest first.",
      auth: operator,
      query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })) }),
      response: {
        200: Type.Array(
          Type.Object({ id: Type.String(), host: Type.String(), report: Type.Unknown(), received_at: Timestamp }),
        ),
      },
      handler: async (request) => fleet.list(request.query.limit ?? 100),
    }),
    route({
      method: "POST",
      url: "/v1/fleet/patch-report",
      operationId: "reportFleetPatch",
      tags: ["meta"],
      summary: "Operator-only daily host patch report, authenticated by FLEET_TOKEN.",
      summaryKo: "운영자 전용 호스트 일일 패치 보고(FLEET_TOKEN).",
      auth: { fleet: true },
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
      handler: async (request, reply) => {
        const { host, ...report } = request.body;
        return reply.code(202).send({ id: await fleet.record(host, report) });
      },
    }),
  ];
}
