import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { Body, Nullable } from "../../http/schemas.js";
import type { PaymentsService } from "./service.js";
import type { paymentWebhooks } from "./webhooks.js";
import {
  CARD_SAVE_ERRORS,
  CardCredentials,
  AutoRecharge,
  Card,
  CurrencySchema,
  ErrorBody,
  ProviderSchema,
  Topup,
  WebhookAnswer,
  autoRechargeView,
  cardView,
  topupView,
} from "./schemas.js";
import { registerRoutes, route, type Route } from "../../http/route.js";
import { noContentAfter } from "../../http/no-content.js";

const read = { scope: "billing:read" } as const;
const write = { scope: "billing:write" } as const;
const TopupParams = Type.Object({ id: Type.String({ format: "uuid" }) });
const Limits = Type.Object({ min: Type.Integer(), max: Type.Integer() });
const CheckoutConfig = Type.Object({
  stripe: Nullable(
    Type.Object({
      publishable_key: Type.String({ description: "Stripe publishable key (pk_…) for Stripe.js" }),
      js_url: Type.String({ description: "where Stripe.js loads from" }),
    }),
  ),
  toss: Nullable(
    Type.Object({
      client_key: Type.String({ description: "Toss Payments client key for the payment widget" }),
      js_url: Type.String({ description: "where the Toss Payments SDK v2 loads from" }),
    }),
  ),
  topup_limits: Type.Object({ krw: Limits, usd_cents: Limits }),
});

/** Auto-recharge as GET and PUT answer it: the settings with the card they charge. */
const autoRechargeAnswer = ({ settings, card }: Awaited<ReturnType<PaymentsService["getAutoRecharge"]>>) =>
  autoRechargeView(settings, card);

/** Top-ups, saved card, auto-recharge and the two provider webhooks. */
export async function paymentRoutes(
  app: FastifyInstance,
  payments: PaymentsService,
  webhooks: ReturnType<typeof paymentWebhooks>,
) {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/checkout-config",
      operationId: "getCheckoutConfig",
      tags: ["billing"],
      summary:
        "What a browser needs to finish a top-up in the provider's checkout UI: each configured provider's public key (Stripe publishable key, Toss client key) and script URL, null when not offered, and the top-up limits. Public: it holds no secret.",
      summaryKo: "브라우저 결제 위젯 설정: 사용할 수 있는 결제사와 공개 키, 스크립트 주소, 충전 한도.",
      auth: { public: true },
      response: { 200: CheckoutConfig },
      handler: async () => payments.checkoutConfig(),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/billing/topups",
      operationId: "createTopup",
      tags: ["billing"],
      summary:
        "Create a top-up request: provider stripe (USD, amount in cents; answers a PaymentIntent client_secret) or toss (KRW, amount in won; answers the order_id for the payment window).",
      summaryKo: "충전 요청을 만듭니다. stripe는 USD(센트), toss는 KRW(원).",
      auth: write,
      errors: [
        "currency_not_supported",
        "amount_out_of_range",
        "provider_unavailable",
        "provider_error",
        "invalid_payment_method",
        "payment_failed",
      ],
      body: Body({
        amount: Type.Integer({ minimum: 1, description: "USD cents or KRW won" }),
        currency: CurrencySchema,
        provider: ProviderSchema,
      }),
      response: { 201: Topup, 502: ErrorBody },
      handler: async (request, reply) => {
        const t = await payments.createTopup(request.principal!, request.body);
        return reply.code(201).send(topupView(t));
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/topups/:id",
      operationId: "getTopup",
      tags: ["billing"],
      summary: "Top-up status.",
      summaryKo: "충전 상태.",
      auth: read,
      params: TopupParams,
      response: { 200: Topup },
      handler: async (request) => topupView(await payments.getTopup(request.principal!, request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/billing/topups/:id/confirm",
      operationId: "confirmTopup",
      tags: ["billing"],
      summary:
        "Confirm a top-up: toss needs the payment_key from the payment window (Toss confirm API); stripe checks the PaymentIntent, confirming it with payment_method when given. The wallet is credited once, whether this or the webhook comes first.",
      summaryKo:
        "충전을 확정합니다. toss는 결제창이 준 payment_key, stripe는 선택적으로 payment_method. 지갑에는 한 번만 적립됩니다.",
      auth: write,
      errors: [
        "payment_key_mismatch",
        "topup_not_pending",
        "payment_key_required",
        "invalid_payment_key",
        "invalid_payment_method",
        "payment_rejected",
        "payment_failed",
        "provider_unavailable",
        "provider_error",
      ],
      params: TopupParams,
      body: Body({
        payment_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        payment_method: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      }),
      response: { 200: Topup, 402: ErrorBody, 502: ErrorBody },
      handler: async (request) =>
        topupView(await payments.confirmTopup(request.principal!, request.params.id, request.body)),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/cards",
      operationId: "getCard",
      tags: ["billing"],
      summary: "The saved card (provider reference and display data only), or null.",
      summaryKo: "저장된 카드(제공자 참조와 표시 정보만).",
      auth: read,
      response: { 200: Type.Object({ card: Nullable(Card) }) },
      handler: async (request) => {
        const { card } = await payments.getAutoRecharge(request.principal!);
        return { card: card ? cardView(card) : null };
      },
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/billing/cards",
      operationId: "saveCard",
      tags: ["billing"],
      summary:
        "Save a card, replacing any saved one: stripe with payment_method (pm_…) attaches it (201); stripe without it starts a SetupIntent (202, saved by the webhook); toss with the auth_key of the card registration window issues a billing key (201). Card numbers are never stored.",
      summaryKo:
        "카드를 저장합니다. stripe는 payment_method(없으면 SetupIntent 시작), toss는 카드 등록창의 auth_key. 카드 번호는 저장하지 않습니다.",
      auth: write,
      errors: [...CARD_SAVE_ERRORS],
      body: Body({ provider: ProviderSchema, ...CardCredentials }),
      response: {
        201: Card,
        202: Type.Object({
          setup_intent: Type.Object({ id: Type.String(), client_secret: Type.String(), status: Type.String() }),
        }),
        402: ErrorBody,
        502: ErrorBody,
      },
      handler: async (request, reply) => {
        const result = await payments.saveCard(request.principal!, request.body);
        if ("setup" in result) return reply.code(202).send({ setup_intent: result.setup });
        return reply.code(201).send(cardView(result.card));
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/billing/cards",
      operationId: "deleteCard",
      tags: ["billing"],
      summary: "Delete the saved card; auto-recharge, which needs it, is switched off.",
      summaryKo: "저장된 카드를 삭제합니다. 자동 충전도 꺼집니다.",
      auth: write,
      errors: ["not_found"],
      response: { 204: Type.Null() },
      handler: async (request, reply) => noContentAfter(reply, payments.deleteCard(request.principal!)),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/auto-recharge",
      operationId: "getAutoRecharge",
      tags: ["billing"],
      summary: "Auto-recharge settings, the card it charges, and its last failure.",
      summaryKo: "자동 충전 설정과 최근 실패.",
      auth: read,
      response: { 200: AutoRecharge },
      handler: async (request) => autoRechargeAnswer(await payments.getAutoRecharge(request.principal!)),
    }),
  );

  routes.push(
    route({
      method: "PUT",
      url: "/v1/billing/auto-recharge",
      operationId: "setAutoRecharge",
      tags: ["billing"],
      summary:
        "Set auto-recharge: when the balance falls below threshold, the saved card is charged amount once (units of the card's currency: USD cents, KRW won); a failed charge is retried with back-off.",
      summaryKo: "자동 충전을 설정합니다. 잔액이 threshold 아래로 내려가면 저장된 카드로 amount를 한 번 결제합니다.",
      auth: write,
      errors: ["card_required", "amount_out_of_range"],
      body: Body({
        enabled: Type.Boolean(),
        threshold: Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }),
        amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }),
      }),
      response: { 200: AutoRecharge },
      handler: async (request) => autoRechargeAnswer(await payments.setAutoRecharge(request.principal!, request.body)),
    }),
  );

  // Stripe signs the exact bytes it sent: this route alone keeps the raw body (other routes parse JSON as usual)
  await app.register(async (raw) => {
    raw.removeContentTypeParser("application/json");
    raw.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    registerRoutes(raw, [
      route({
        method: "POST",
        url: "/v1/billing/stripe/webhook",
        operationId: "stripeWebhook",
        tags: ["billing"],
        summary:
          "Stripe events, signature verified (Stripe-Signature, tolerance window), applied once per event id: payment_intent.* (top-up confirmation), setup_intent.succeeded and payment_method.attached (card saving), charge.refunded (refund entry).",
        summaryKo: "Stripe 웹훅(서명 검증, 이벤트 id로 한 번만 적용): 충전 확정, 카드 저장, 환불.",
        auth: { public: true },
        errors: ["webhook_not_configured", "invalid_signature", "provider_error"],
        headers: Type.Object({ "stripe-signature": Type.Optional(Type.String()) }),
        response: { 200: WebhookAnswer },
        handler: async (request) => {
          const body = request.body;
          return webhooks.stripeEvent(
            Buffer.isBuffer(body) ? body : Buffer.alloc(0),
            request.headers["stripe-signature"],
            request.log,
          );
        },
      }),
    ]);
  });

  routes.push(
    route({
      method: "POST",
      url: "/v1/billing/toss/webhook",
      operationId: "tossWebhook",
      tags: ["billing"],
      summary:
        "Toss Payments PAYMENT_STATUS_CHANGED: the secret in query key is checked, then the payment is fetched from Toss and its state (approval, cancellation, refund) applied; the body only names the payment.",
      summaryKo: "Toss Payments 웹훅(쿼리 key 비밀값 확인 후 Toss에서 결제를 다시 조회해 취소·환불 적용).",
      auth: { public: true },
      errors: ["webhook_not_configured", "provider_error"],
      query: Type.Object({ key: Type.Optional(Type.String({ maxLength: 500 })) }),
      body: Type.Object({}, { additionalProperties: true }),
      response: { 200: WebhookAnswer },
      handler: async (request) => webhooks.tossEvent(request.query.key, request.body, request.log),
    }),
  );
  registerRoutes(app, routes);
}
