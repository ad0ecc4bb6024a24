import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { Body, Timestamp } from "../http/schemas.js";
import { paymentsService } from "./payments/service.js";
import { paymentWebhooks } from "./payments/webhooks.js";
import { paymentRoutes as topupAndCardRoutes } from "./payments/routes.js";
import { paymentDeps } from "./payments/jobs.js";
import { creditAccount } from "./payments/adjustments.js";
import { CurrencySchema } from "./payments/schemas.js";
import { bankTransferService } from "./bank/service.js";
import { bankTransferRoutes } from "./bank/routes.js";
import { registerRoutes, route } from "../http/route.js";

/** Billing part B: payments (top-ups, cards, auto-recharge, webhooks), bank transfers, operator credit. */
export async function paymentRoutes(app: FastifyInstance, ctx: AppContext) {
  const deps = paymentDeps(ctx.db, ctx.config, app.log, ctx.secrets);
  const payments = paymentsService(deps);
  await topupAndCardRoutes(app, payments, paymentWebhooks(deps, payments));
  await bankTransferRoutes(app, bankTransferService(ctx.db, ctx.config.payments));

  registerRoutes(app, [
    route({
      method: "POST",
      url: "/v1/operator/accounts/:id/credit",
      operationId: "operatorCreditAccount",
      tags: ["operator"],
      summary:
        "Manual credit: an adjustment entry to the account's wallet, in ledger units (KRW won, USD micro-dollars), with its reason as memo.",
      auth: { operator: true },
      params: Type.Object({ id: Type.String({ format: "uuid" }) }),
      body: Body({
        amount: Type.Integer({
          minimum: 1,
          maximum: 1_000_000_000_000_000,
          description: "ledger units: KRW won, USD micro-dollars",
        }),
        currency: CurrencySchema,
        reason: Type.String({ minLength: 1, maxLength: 500 }),
      }),
      response: {
        201: Type.Object({
          transaction_id: Type.String(),
          account_id: Type.String(),
          currency: CurrencySchema,
          amount: Type.Integer(),
          reason: Type.String(),
          balance: Type.Integer({ description: "the wallet's balance after the credit" }),
          created_at: Timestamp,
        }),
      },
      handler: async (request, reply) => {
        const done = await creditAccount(ctx.db, request.principal, { accountId: request.params.id, ...request.body });
        return reply.code(201).send({ ...done, created_at: done.created_at.toISOString() });
      },
    }),
  ]);
}
