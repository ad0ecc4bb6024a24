/**
 * License orders paid through Toss Payments (README: src/onprem/README.md, "Orders"). The server computes the
 * amount; the payment window runs with the order's orderId and amount; confirm asks Toss to confirm (its documented
 * confirm API), then issues the license and records the sale in the ledger in one transaction under the order's row
 * lock, so concurrent confirms issue one license (and the licenses' unique order_id backs that up).
 */
import { createHmac, randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import { ownerKey } from "../kernel/owner.js";
import type { SecretBox } from "../kernel/secrets.js";
import { post, systemWallet, TossError, type TossClient, type TossPayment } from "../billing/public.js";
import { actingFor, actingForOwnerOf, requireAccessAndTerms, type Scope } from "./acting.js";
import { addMonths, issueLicense, PAID_FEATURES, type LicensesDeps } from "./licenses-service.js";
import * as repo from "./repo/licenses.js";

export interface OrdersDeps extends LicensesDeps {
  toss: TossClient | null;
  /** the browser's Toss client key, shown with the payment parameters */
  tossClientKey: string | null;
  secrets: SecretBox;
  log: FastifyBaseLogger;
}

export interface NewOrder {
  hosts: number;
  months: number;
  customer: string;
  scope: Scope;
  renew_of?: string | null;
}

/** The ledger's idempotency key of an order's sale: one posting per order, whatever the retries. */
export const saleKey = (orderId: string) => `onprem-order:${orderId}:sale`;

export function ordersService(deps: OrdersDeps) {
  const { db, config, log } = deps;
  const customerSecret = deps.secrets.derive("onprem-toss-customer-key");

  function toss(): TossClient {
    if (!deps.toss) throw new ApiError("provider_unavailable", "Toss Payments is not configured (TOSS_SECRET_KEY).");
    return deps.toss;
  }

  /** Toss's customerKey for an owner: stable, opaque, at most 50 characters. */
  const customerKey = (order: repo.OrderRow) =>
    "onprem_" +
    createHmac("sha256", customerSecret)
      .update(ownerKey({ kind: order.owner_kind, id: order.owner_id }))
      .digest("base64url")
      .slice(0, 32);

  const paymentParams = (order: repo.OrderRow) => ({
    provider: "toss" as const,
    order_id: order.order_id,
    amount: order.amount_krw,
    order_name: order.order_name,
    customer_key: customerKey(order),
    client_key: deps.tossClientKey,
  });

  async function create(p: Principal, input: NewOrder) {
    const acting = await actingFor(deps, p, input.scope, "admin");
    await requireAccessAndTerms(db, acting, config.termsVersion);
    if (!config.allowedMonths.includes(input.months))
      throw new ApiError("invalid_request", `months must be one of ${config.allowedMonths.join(", ")}.`);
    if (input.hosts > config.maxHosts)
      throw new ApiError("invalid_request", `hosts must be between 1 and ${config.maxHosts}.`);
    if (input.renew_of) {
      const old = await repo.findLicense(db, input.renew_of);
      if (!old || old.owner_kind !== acting.owner.kind || old.owner_id !== acting.owner.id)
        throw new ApiError("not_found", "renew_of names no license of this owner.");
    }
    toss();
    const amount = input.hosts * input.months * config.pricePerHostMonthKrw;
    if (!Number.isSafeInteger(amount)) throw new ApiError("amount_out_of_range", "The order is too large.");
    const id = randomUUID();
    const order = await auditedTransaction(db, acting.principal, (tx) =>
      repo.insertOrder(tx, {
        id,
        order_id: `onprem-${id}`,
        owner: acting.owner,
        account_id: p.accountId,
        customer: input.customer,
        hosts: input.hosts,
        months: input.months,
        amount_krw: amount,
        order_name: `On-premises license, ${input.hosts} host${input.hosts === 1 ? "" : "s"} x ${input.months} month${input.months === 1 ? "" : "s"}`,
        renew_of: input.renew_of ?? null,
      }),
    );
    return { order, payment: paymentParams(order) };
  }

  async function get(p: Principal, id: string) {
    const order = await repo.findOrder(db, id);
    if (!order) throw new ApiError("not_found", "No such order for this account.");
    await actingForOwnerOf(deps, p, order, "member", "order");
    return { order, payment: paymentParams(order) };
  }

  /**
   * Issues the license and records the sale, once: under the order's row lock a paid order is returned as it is.
   * A license renewing another starts where that one ends (or now, when it has ended).
   */
  async function fulfil(principal: Principal | null, orderId: string, paymentKey: string): Promise<repo.OrderRow> {
    await auditedTransaction(db, principal, async (tx) => {
      const order = (await repo.lockOrder(tx, orderId))!;
      if (order.status === "paid") return;
      const now = new Date();
      const old = order.renew_of ? await repo.findLicense(tx, order.renew_of) : null;
      const notBefore = old && old.not_after > now ? old.not_after : now;
      await issueLicense(tx, deps.signingKey, {
        kind: "paid",
        owner: { kind: order.owner_kind, id: order.owner_id },
        accountId: order.account_id,
        orderId: order.id,
        renews: order.renew_of,
        customer: order.customer,
        hosts: order.hosts,
        notBefore,
        notAfter: addMonths(notBefore, order.months),
        features: PAID_FEATURES,
      });
      // the sale: Toss holds the money (payments-clearing) and it is the platform's revenue
      const clearing = await systemWallet(tx, "payments-clearing", "KRW");
      const revenue = await systemWallet(tx, "revenue", "KRW");
      const { transaction } = await post(tx, {
        currency: "KRW",
        source: { type: "invoice", id: order.id },
        idempotencyKey: saleKey(order.id),
        legs: [
          { walletId: clearing.id, amount: -order.amount_krw },
          { walletId: revenue.id, amount: order.amount_krw },
        ],
        memo: `on-premises license order ${order.order_id} (toss ${paymentKey})`,
      });
      await repo.markOrderPaid(tx, order.id, { paymentKey, ledgerTransactionId: transaction.id });
    });
    return (await repo.findOrder(db, orderId))!;
  }

  /** Toss's record of a payment proves this order was paid: same orderId, the whole amount, DONE. */
  const pays = (order: repo.OrderRow, payment: TossPayment) =>
    payment.orderId === order.order_id && payment.totalAmount === order.amount_krw && payment.status === "DONE";

  async function confirm(
    p: Principal,
    id: string,
    input: { payment_key: string; order_id: string; amount_krw: number },
  ) {
    const found = await repo.findOrder(db, id);
    if (!found) throw new ApiError("not_found", "No such order for this account.");
    const acting = await actingForOwnerOf(deps, p, found, "admin", "order");
    if (input.order_id !== found.order_id)
      throw new ApiError("invalid_request", "order_id is not this order's orderId; nothing was confirmed.");
    if (input.amount_krw !== found.amount_krw)
      throw new ApiError(
        "invalid_request",
        `amount_krw ${input.amount_krw} does not match the order's amount ${found.amount_krw}; nothing was confirmed or issued.`,
      );
    if (found.status === "paid") {
      if (found.payment_key !== input.payment_key)
        throw new ApiError("conflict", "The order is already paid with another paymentKey.");
      return { order: found, payment: paymentParams(found) };
    }
    const t = toss();
    let payment: TossPayment;
    try {
      payment = await t.confirm({ paymentKey: input.payment_key, orderId: found.order_id, amount: found.amount_krw });
    } catch (err) {
      if (!(err instanceof TossError)) throw err;
      if (err.status === 0 || err.status >= 500) throw new ApiError("provider_error", err.message);
      // refused: already confirmed (a concurrent confirm, or earlier), or really refused; Toss's record decides
      payment = await lookup(t, input.payment_key, found);
      if (!pays(found, payment)) {
        await repo.noteOrderFailure(db, found.id, err.code, err.message);
        if (payment.status === "READY" || payment.status === "IN_PROGRESS")
          throw err.status === 400
            ? new ApiError("payment_rejected", `Toss refused the confirmation: ${err.message} (${err.code}).`)
            : new ApiError("payment_failed", `Toss refused the payment: ${err.message} (${err.code}).`);
        throw new ApiError("payment_failed", `The payment ended ${payment.status}: ${err.message} (${err.code}).`);
      }
    }
    if (!pays(found, payment)) {
      log.error({ orderId: found.id, payment: payment.paymentKey }, "Toss confirmed a payment that does not match");
      throw new ApiError("provider_error", "Toss's answer does not match this order; nothing was issued.");
    }
    const order = await fulfil(acting.principal, found.id, payment.paymentKey);
    return { order, payment: paymentParams(order) };
  }

  async function lookup(t: TossClient, paymentKey: string, order: repo.OrderRow): Promise<TossPayment> {
    let current: TossPayment;
    try {
      current = await t.getPayment(paymentKey);
    } catch (lookupErr) {
      if (lookupErr instanceof TossError && lookupErr.status === 404)
        throw new ApiError("invalid_payment_key", "Toss does not know this paymentKey.");
      throw new ApiError("provider_error", lookupErr instanceof Error ? lookupErr.message : String(lookupErr));
    }
    if (current.orderId !== order.order_id)
      throw new ApiError("invalid_payment_key", "This paymentKey belongs to another order.");
    return current;
  }

  return { create, get, confirm };
}

export type OrdersService = ReturnType<typeof ordersService>;
