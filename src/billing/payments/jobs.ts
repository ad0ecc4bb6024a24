import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import type { Config } from "../../config/config.js";
import type { Db } from "../../store/db.js";
import type { JobSpec } from "../../kernel/area.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { runAutoRecharge } from "./auto-recharge.js";
import { stripeClient } from "./stripe.js";
import { tossClient } from "./toss.js";
import type { PaymentDeps } from "./service.js";
import { everyMinute } from "../../kernel/periodic.js";

export function paymentDeps(db: Db, config: Config, log: FastifyBaseLogger, secrets: SecretBox): PaymentDeps {
  return {
    db,
    config: config.payments,
    stripe: stripeClient(config.payments.stripe),
    toss: tossClient(config.payments.toss),
    log,
    secrets,
  };
}

/** `billing.auto-recharge` (every minute): charges saved cards of accounts below their threshold, once each. */
export function paymentJobs(deps: { db: Db; config: Config; secrets: SecretBox }): JobSpec[] {
  const payments = paymentDeps(
    deps.db,
    deps.config,
    pino({ level: deps.config.logLevel, name: "billing.auto-recharge" }),
    deps.secrets,
  );
  return [everyMinute("billing.auto-recharge", () => runAutoRecharge(payments), { expireInSeconds: 600 })];
}
