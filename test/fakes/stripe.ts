import { createHmac, randomBytes } from "node:crypto";
import { parseStripeForm, startFakeServer, type FakeRequest, type FakeResponse } from "./http.js";

/**
 * A local stand-in for the Stripe API, speaking its documented shapes: form-encoded requests with bearer
 * secret key, JSON objects with `object` names, `{error:{type,code,message}}` failures (402 for card errors),
 * Idempotency-Key replays. Covers what the platform calls: customers, payment methods (attach, detach,
 * retrieve), payment intents (create, retrieve, confirm, off-session), setup intents. Test controls stand in
 * for what a browser does with Stripe.js (confirming with a card) and for refunds made in the dashboard.
 */
export interface FakeStripe {
  url: string;
  secretKey: string;
  webhookSecret: string;
  paymentIntents: Map<string, any>;
  paymentMethods: Map<string, any>;
  setupIntents: Map<string, any>;
  charges: Map<string, any>;
  customers: Map<string, any>;
  requests: FakeRequest[];
  /** A card the test can use: brand/last4, and whether charges on it are declined. */
  createCard(opts?: { brand?: string; last4?: string; decline?: boolean }): string;
  /** What Stripe.js does in the browser: confirm the intent with a card; returns the intent. */
  completeClientSide(paymentIntentId: string, paymentMethodId?: string): any;
  /** Completes a SetupIntent with a card (attached to the intent's customer). */
  completeSetupIntent(setupIntentId: string, paymentMethodId?: string): any;
  /** A dashboard refund: returns the charge afterwards. */
  refund(paymentIntentId: string, amount?: number): any;
  /** Builds an event object as Stripe sends it. */
  event(type: string, object: unknown): any;
  /** Signs a payload as Stripe does: t=<ts>,v1=HMAC-SHA256(secret, "<ts>.<payload>"). */
  sign(payload: string, opts?: { secret?: string; timestamp?: number }): string;
  /** The next n API calls answer 500 (to test retries and failures). */
  failNext(n: number): void;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;
const now = () => Math.floor(Date.now() / 1000);
const err = (status: number, type: string, message: string, extra: Record<string, unknown> = {}): FakeResponse => ({
  status,
  body: { error: { type, message, ...extra } },
});

export async function startFakeStripe(opts: { secretKey?: string; webhookSecret?: string } = {}): Promise<FakeStripe> {
  const secretKey = opts.secretKey ?? `sk_test_${randomBytes(16).toString("hex")}`;
  const webhookSecret = opts.webhookSecret ?? `whsec_${randomBytes(16).toString("hex")}`;
  const customers = new Map<string, any>();
  const paymentMethods = new Map<string, any>();
  const declining = new Set<string>();
  const paymentIntents = new Map<string, any>();
  const setupIntents = new Map<string, any>();
  const charges = new Map<string, any>();
  const idempotent = new Map<string, FakeResponse>();
  let failures = 0;

  function createCard(o: { brand?: string; last4?: string; decline?: boolean } = {}): string {
    const pm = {
      id: id("pm"),
      object: "payment_method",
      type: "card",
      created: now(),
      customer: null,
      livemode: false,
      metadata: {},
      billing_details: { address: null, email: null, name: null, phone: null },
      card: {
        brand: o.brand ?? "visa",
        last4: o.last4 ?? "4242",
        exp_month: 12,
        exp_year: 2034,
        funding: "credit",
        country: "US",
      },
    };
    paymentMethods.set(pm.id, pm);
    if (o.decline) declining.add(pm.id);
    return pm.id;
  }

  /** Charges the intent's card: succeeded with a charge, or a card error that leaves it requiring a method. */
  function attemptCharge(pi: any): FakeResponse | null {
    const pm = paymentMethods.get(pi.payment_method);
    if (!pm)
      return err(400, "invalid_request_error", `No such PaymentMethod: '${pi.payment_method}'`, {
        code: "resource_missing",
        param: "payment_method",
      });
    if (declining.has(pm.id)) {
      pi.status = "requires_payment_method";
      pi.last_payment_error = {
        type: "card_error",
        code: "card_declined",
        decline_code: "generic_decline",
        message: "Your card was declined.",
        payment_method: pm,
      };
      return err(402, "card_error", "Your card was declined.", {
        code: "card_declined",
        decline_code: "generic_decline",
        payment_intent: pi,
        charge: id("ch"),
      });
    }
    const charge = {
      id: id("ch"),
      object: "charge",
      amount: pi.amount,
      amount_captured: pi.amount,
      amount_refunded: 0,
      currency: pi.currency,
      customer: pi.customer,
      payment_intent: pi.id,
      payment_method: pm.id,
      paid: true,
      captured: true,
      refunded: false,
      status: "succeeded",
      created: now(),
      livemode: false,
      metadata: pi.metadata,
    };
    charges.set(charge.id, charge);
    pi.status = "succeeded";
    pi.amount_received = pi.amount;
    pi.latest_charge = charge.id;
    pi.last_payment_error = null;
    return null;
  }

  function createIntent(p: any): FakeResponse {
    const amount = Number(p.amount);
    if (!Number.isInteger(amount) || amount < 50)
      return err(400, "invalid_request_error", "Amount must be at least $0.50 usd", {
        code: "amount_too_small",
        param: "amount",
      });
    if (typeof p.currency !== "string")
      return err(400, "invalid_request_error", "Missing required param: currency.", {
        code: "parameter_missing",
        param: "currency",
      });
    if (p.customer && !customers.has(p.customer))
      return err(400, "invalid_request_error", `No such customer: '${p.customer}'`, {
        code: "resource_missing",
        param: "customer",
      });
    const piId = id("pi");
    const pi: any = {
      id: piId,
      object: "payment_intent",
      amount,
      amount_received: 0,
      currency: p.currency,
      customer: p.customer ?? null,
      payment_method: p.payment_method ?? null,
      metadata: p.metadata ?? {},
      description: p.description ?? null,
      status: p.payment_method ? "requires_confirmation" : "requires_payment_method",
      client_secret: `${piId}_secret_${randomBytes(8).toString("hex")}`,
      latest_charge: null,
      last_payment_error: null,
      created: now(),
      livemode: false,
      off_session: p.off_session === "true",
      capture_method: "automatic",
      confirmation_method: "automatic",
    };
    paymentIntents.set(pi.id, pi);
    if (p.confirm === "true") {
      const failed = attemptCharge(pi);
      if (failed) return failed;
    }
    return { status: 200, body: pi };
  }

  async function handle(req: FakeRequest): Promise<FakeResponse> {
    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      return err(401, "invalid_request_error", "Invalid API Key provided.");
    }
    if (failures > 0) {
      failures--;
      return err(500, "api_error", "An unknown error occurred.");
    }
    const key = req.headers["idempotency-key"];
    const cacheKey = typeof key === "string" && req.method === "POST" ? `${req.path}\0${key}` : null;
    if (cacheKey && idempotent.has(cacheKey)) return idempotent.get(cacheKey)!;
    const res = route(req, parseStripeForm(req.raw));
    if (cacheKey && res.status < 500)
      idempotent.set(cacheKey, { status: res.status, body: JSON.parse(JSON.stringify(res.body)) });
    return res;
  }

  function route(req: FakeRequest, p: any): FakeResponse {
    const path = req.path.split("?")[0];
    let m: RegExpExecArray | null;
    if (req.method === "POST" && path === "/v1/customers") {
      const c = {
        id: id("cus"),
        object: "customer",
        email: p.email ?? null,
        metadata: p.metadata ?? {},
        created: now(),
        livemode: false,
      };
      customers.set(c.id, c);
      return { status: 200, body: c };
    }
    if (req.method === "POST" && path === "/v1/payment_intents") return createIntent(p);
    if ((m = /^\/v1\/payment_intents\/([^/]+)(\/confirm|\/cancel)?$/.exec(path))) {
      const pi = paymentIntents.get(decodeURIComponent(m[1]));
      if (!pi)
        return err(404, "invalid_request_error", `No such payment_intent: '${m[1]}'`, {
          code: "resource_missing",
          param: "intent",
        });
      if (req.method === "GET" && !m[2]) return { status: 200, body: pi };
      if (req.method === "POST" && m[2] === "/confirm") {
        if (pi.status === "succeeded")
          return err(
            400,
            "invalid_request_error",
            "This PaymentIntent's status is succeeded; it cannot be confirmed.",
            { code: "payment_intent_unexpected_state", payment_intent: pi },
          );
        if (p.payment_method) pi.payment_method = p.payment_method;
        if (!pi.payment_method)
          return err(
            400,
            "invalid_request_error",
            "You cannot confirm this PaymentIntent because it's missing a payment method.",
            { code: "payment_intent_unexpected_state" },
          );
        const failed = attemptCharge(pi);
        return failed ?? { status: 200, body: pi };
      }
      if (req.method === "POST" && m[2] === "/cancel") {
        if (pi.status === "succeeded")
          return err(
            400,
            "invalid_request_error",
            "You cannot cancel this PaymentIntent because it has a status of succeeded.",
            { code: "payment_intent_unexpected_state" },
          );
        pi.status = "canceled";
        return { status: 200, body: pi };
      }
    }
    if (req.method === "POST" && path === "/v1/setup_intents") {
      if (p.customer && !customers.has(p.customer))
        return err(400, "invalid_request_error", `No such customer: '${p.customer}'`, { code: "resource_missing" });
      const siId = id("seti");
      const si = {
        id: siId,
        object: "setup_intent",
        customer: p.customer ?? null,
        payment_method: null,
        status: "requires_payment_method",
        usage: p.usage ?? "off_session",
        client_secret: `${siId}_secret_${randomBytes(8).toString("hex")}`,
        metadata: p.metadata ?? {},
        created: now(),
        livemode: false,
      };
      setupIntents.set(si.id, si);
      return { status: 200, body: si };
    }
    if ((m = /^\/v1\/setup_intents\/([^/]+)$/.exec(path)) && req.method === "GET") {
      const si = setupIntents.get(decodeURIComponent(m[1]));
      return si
        ? { status: 200, body: si }
        : err(404, "invalid_request_error", `No such setupintent: '${m[1]}'`, { code: "resource_missing" });
    }
    if ((m = /^\/v1\/payment_methods\/([^/]+)(\/attach|\/detach)?$/.exec(path))) {
      const pm = paymentMethods.get(decodeURIComponent(m[1]));
      if (!pm)
        return err(404, "invalid_request_error", `No such PaymentMethod: '${m[1]}'`, {
          code: "resource_missing",
          param: "payment_method",
        });
      if (req.method === "GET" && !m[2]) return { status: 200, body: pm };
      if (req.method === "POST" && m[2] === "/attach") {
        if (!customers.has(p.customer))
          return err(400, "invalid_request_error", `No such customer: '${p.customer}'`, {
            code: "resource_missing",
            param: "customer",
          });
        pm.customer = p.customer;
        return { status: 200, body: pm };
      }
      if (req.method === "POST" && m[2] === "/detach") {
        if (!pm.customer)
          return err(
            400,
            "invalid_request_error",
            `The payment method you provided is not attached to a customer so detachment is impossible.`,
            { code: "payment_method_unexpected_state" },
          );
        pm.customer = null;
        return { status: 200, body: pm };
      }
    }
    return err(404, "invalid_request_error", `Unrecognized request URL (${req.method}: ${path}).`);
  }

  const server = await startFakeServer(handle);
  return {
    url: server.url,
    secretKey,
    webhookSecret,
    paymentIntents,
    paymentMethods,
    setupIntents,
    charges,
    customers,
    requests: server.log,
    createCard,
    completeClientSide(piId, pmId) {
      const pi = paymentIntents.get(piId);
      if (!pi) throw new Error(`no payment intent ${piId}`);
      pi.payment_method = pmId ?? createCard();
      const failed = attemptCharge(pi);
      if (failed) throw new Error("card declined");
      return pi;
    },
    completeSetupIntent(siId, pmId) {
      const si = setupIntents.get(siId);
      if (!si) throw new Error(`no setup intent ${siId}`);
      const pm = paymentMethods.get(pmId ?? createCard({ brand: "mastercard", last4: "4444" }));
      pm.customer = si.customer;
      si.payment_method = pm.id;
      si.status = "succeeded";
      return si;
    },
    refund(piId, amount) {
      const pi = paymentIntents.get(piId);
      const charge = pi && charges.get(pi.latest_charge);
      if (!charge) throw new Error(`nothing charged on ${piId}`);
      charge.amount_refunded = Math.min(
        charge.amount,
        charge.amount_refunded + (amount ?? charge.amount - charge.amount_refunded),
      );
      charge.refunded = charge.amount_refunded === charge.amount;
      return JSON.parse(JSON.stringify(charge));
    },
    event(type, object) {
      return {
        id: id("evt"),
        object: "event",
        api_version: "2026-10-28.endive",
        created: now(),
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
        data: { object: JSON.parse(JSON.stringify(object)) },
      };
    },
    sign(payload, o = {}) {
      const ts = o.timestamp ?? now();
      const sig = createHmac("sha256", o.secret ?? webhookSecret)
        .update(`${ts}.${payload}`)
        .digest("hex");
      return `t=${ts},v1=${sig}`;
    },
    failNext(n) {
      failures = n;
    },
    close: server.close,
  };
}
