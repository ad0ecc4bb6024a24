import { randomBytes } from "node:crypto";
import { startFakeServer, type FakeRequest, type FakeResponse } from "./http.js";

/**
 * A local stand-in for the Toss Payments core API (version 2022-11-16): Basic auth with the secret key and
 * an empty password, JSON bodies, `{code, message}` failures, the Payment object. Covers confirm, lookup by
 * paymentKey and by orderId, cancel, billing-key issue and billing-key charges. Test controls stand in for
 * the payment window (authorizing a payment, issuing an authKey) and for cancellations made by the merchant.
 */
export interface FakeToss {
  url: string;
  secretKey: string;
  payments: Map<string, any>;
  requests: FakeRequest[];
  /** The payment window succeeded: Toss redirects with paymentKey, orderId, amount. */
  authorize(orderId: string, amount: number, opts?: { decline?: boolean }): string;
  /** The card registration window succeeded: returns the authKey for billing-key issue. */
  issueAuthKey(opts?: { number?: string; company?: string; decline?: boolean }): string;
  /** A cancellation (refund) made at Toss; returns the payment afterwards. */
  cancel(paymentKey: string, amount?: number): any;
  /** Billing charges on this key are refused from now on (or accepted again). */
  setDecline(billingKey: string, decline: boolean): void;
  /** The webhook body Toss sends for a payment status change. */
  webhookBody(paymentKey: string): any;
  failNext(n: number): void;
  close(): Promise<void>;
}

const fail = (status: number, code: string, message: string): FakeResponse => ({ status, body: { code, message } });
const iso = () => new Date().toISOString();

export async function startFakeToss(opts: { secretKey?: string } = {}): Promise<FakeToss> {
  const secretKey = opts.secretKey ?? `test_sk_${randomBytes(16).toString("hex")}`;
  const payments = new Map<string, any>();
  const byOrder = new Map<string, string>();
  const declines = new Set<string>();
  const authKeys = new Map<string, { number: string; company: string; decline: boolean }>();
  const billingKeys = new Map<string, { customerKey: string; number: string; company: string }>();
  const idempotent = new Map<string, FakeResponse>();
  let failures = 0;

  function newPayment(
    orderId: string,
    amount: number,
    type: "NORMAL" | "BILLING",
    card = { number: "43301234****123*", issuerCode: "11", cardType: "신용" },
  ): any {
    const paymentKey = `tgen_${randomBytes(10).toString("hex")}`;
    const p = {
      mId: "tosspayments",
      version: "2022-11-16",
      paymentKey,
      lastTransactionKey: null,
      orderId,
      orderName: "크레딧 충전",
      status: "READY",
      type,
      method: "카드",
      currency: "KRW",
      country: "KR",
      totalAmount: amount,
      balanceAmount: amount,
      suppliedAmount: Math.round(amount / 1.1),
      vat: amount - Math.round(amount / 1.1),
      taxFreeAmount: 0,
      requestedAt: iso(),
      approvedAt: null,
      useEscrow: false,
      cultureExpense: false,
      isPartialCancelable: true,
      card: { ...card, amount, approveNo: null, installmentPlanMonths: 0, isInterestFree: false },
      cancels: null,
      failure: null,
      receipt: null,
      checkout: null,
      easyPay: null,
    };
    payments.set(paymentKey, p);
    byOrder.set(orderId, paymentKey);
    return p;
  }

  function approve(p: any): void {
    p.status = "DONE";
    p.approvedAt = iso();
    p.lastTransactionKey = randomBytes(16).toString("hex");
    p.card.approveNo = String(Math.floor(Math.random() * 1e8)).padStart(8, "0");
  }

  function cancel(p: any, amount: number | undefined, reason: string): FakeResponse {
    if (p.status !== "DONE" && p.status !== "PARTIAL_CANCELED")
      return fail(400, "NOT_CANCELABLE_PAYMENT", "취소 할 수 없는 결제 입니다.");
    const cancelAmount = amount ?? p.balanceAmount;
    if (cancelAmount <= 0 || cancelAmount > p.balanceAmount)
      return fail(400, "NOT_CANCELABLE_AMOUNT", "취소 할 수 없는 금액 입니다.");
    const transactionKey = randomBytes(16).toString("hex");
    p.cancels = [
      ...(p.cancels ?? []),
      {
        cancelAmount,
        cancelReason: reason,
        taxFreeAmount: 0,
        refundableAmount: p.balanceAmount - cancelAmount,
        canceledAt: iso(),
        transactionKey,
        cancelStatus: "DONE",
      },
    ];
    p.balanceAmount -= cancelAmount;
    p.lastTransactionKey = transactionKey;
    p.status = p.balanceAmount === 0 ? "CANCELED" : "PARTIAL_CANCELED";
    return { status: 200, body: p };
  }

  async function handle(req: FakeRequest): Promise<FakeResponse> {
    const expected = "Basic " + Buffer.from(`${secretKey}:`).toString("base64");
    if (req.headers.authorization !== expected)
      return fail(401, "UNAUTHORIZED_KEY", "인증되지 않은 시크릿 키 혹은 클라이언트 키 입니다.");
    if (failures > 0) {
      failures--;
      return fail(
        500,
        "FAILED_INTERNAL_SYSTEM_PROCESSING",
        "내부 시스템 처리 작업이 실패했습니다. 잠시 후 다시 시도해주세요.",
      );
    }
    const key = req.headers["idempotency-key"];
    const cacheKey = typeof key === "string" && req.method === "POST" ? `${req.path}\0${key}` : null;
    if (cacheKey && idempotent.has(cacheKey)) return idempotent.get(cacheKey)!;
    let body: any = {};
    if (req.raw) {
      try {
        body = JSON.parse(req.raw);
      } catch {
        return fail(400, "INVALID_REQUEST", "잘못된 요청입니다.");
      }
    }
    const res = route(req, body);
    if (cacheKey) idempotent.set(cacheKey, { status: res.status, body: JSON.parse(JSON.stringify(res.body)) });
    return res;
  }

  function route(req: FakeRequest, b: any): FakeResponse {
    const path = req.path.split("?")[0];
    let m: RegExpExecArray | null;
    if (req.method === "POST" && path === "/v1/payments/confirm") {
      if (typeof b.paymentKey !== "string" || typeof b.orderId !== "string" || typeof b.amount !== "number")
        return fail(400, "INVALID_REQUEST", "잘못된 요청입니다.");
      const p = payments.get(b.paymentKey);
      if (!p) return fail(404, "NOT_FOUND_PAYMENT", "존재하지 않는 결제 정보 입니다.");
      if (p.orderId !== b.orderId || p.totalAmount !== b.amount)
        return fail(400, "INVALID_REQUEST", "결제 금액 또는 주문번호가 일치하지 않습니다.");
      if (p.status !== "READY" && p.status !== "IN_PROGRESS")
        return fail(400, "ALREADY_PROCESSED_PAYMENT", "이미 처리된 결제 입니다.");
      if (declines.has(p.paymentKey)) {
        p.status = "ABORTED";
        p.failure = { code: "REJECT_CARD_PAYMENT", message: "한도초과 혹은 잔액부족으로 결제에 실패했습니다." };
        return fail(403, "REJECT_CARD_PAYMENT", "한도초과 혹은 잔액부족으로 결제에 실패했습니다.");
      }
      approve(p);
      return { status: 200, body: p };
    }
    if ((m = /^\/v1\/payments\/orders\/([^/]+)$/.exec(path)) && req.method === "GET") {
      const key = byOrder.get(decodeURIComponent(m[1]));
      return key
        ? { status: 200, body: payments.get(key) }
        : fail(404, "NOT_FOUND_PAYMENT", "존재하지 않는 결제 정보 입니다.");
    }
    if ((m = /^\/v1\/payments\/([^/]+)(\/cancel)?$/.exec(path))) {
      const p = payments.get(decodeURIComponent(m[1]));
      if (!p) return fail(404, "NOT_FOUND_PAYMENT", "존재하지 않는 결제 정보 입니다.");
      if (req.method === "GET" && !m[2]) return { status: 200, body: p };
      if (req.method === "POST" && m[2]) return cancel(p, b.cancelAmount, b.cancelReason ?? "");
    }
    if (req.method === "POST" && path === "/v1/billing/authorizations/issue") {
      const auth = authKeys.get(b.authKey);
      if (!auth || typeof b.customerKey !== "string")
        return fail(400, "INVALID_AUTH_KEY", "유효하지 않은 인증 키입니다.");
      authKeys.delete(b.authKey);
      const billingKey = randomBytes(24).toString("base64url");
      billingKeys.set(billingKey, { customerKey: b.customerKey, number: auth.number, company: auth.company });
      if (auth.decline) declines.add(billingKey);
      return {
        status: 200,
        body: {
          mId: "tosspayments",
          customerKey: b.customerKey,
          authenticatedAt: iso(),
          method: "카드",
          billingKey,
          cardCompany: auth.company,
          cardNumber: auth.number,
          card: { issuerCode: "11", acquirerCode: "11", number: auth.number, cardType: "신용", ownerType: "개인" },
        },
      };
    }
    if ((m = /^\/v1\/billing\/([^/]+)$/.exec(path)) && req.method === "POST") {
      const billingKey = decodeURIComponent(m[1]);
      const bk = billingKeys.get(billingKey);
      if (!bk) return fail(404, "NOT_FOUND", "존재하지 않는 빌링키 입니다.");
      if (bk.customerKey !== b.customerKey)
        return fail(400, "NOT_MATCHES_CUSTOMER_KEY", "빌링 인증된 고객키와 결제 요청한 고객키가 일치하지 않습니다.");
      if (typeof b.amount !== "number" || typeof b.orderId !== "string")
        return fail(400, "INVALID_REQUEST", "잘못된 요청입니다.");
      if (byOrder.has(b.orderId))
        return fail(400, "DUPLICATED_ORDER_ID", "이미 승인 및 취소가 진행된 중복된 주문번호 입니다.");
      if (declines.has(billingKey))
        return fail(403, "REJECT_CARD_PAYMENT", "한도초과 혹은 잔액부족으로 결제에 실패했습니다.");
      const p = newPayment(b.orderId, b.amount, "BILLING", { number: bk.number, issuerCode: "11", cardType: "신용" });
      p.orderName = b.orderName;
      approve(p);
      return { status: 200, body: p };
    }
    return fail(404, "NOT_FOUND", "요청한 리소스를 찾을 수 없습니다.");
  }

  const server = await startFakeServer(handle);
  return {
    url: server.url,
    secretKey,
    payments,
    requests: server.log,
    authorize(orderId, amount, o = {}) {
      const p = newPayment(orderId, amount, "NORMAL");
      p.status = "IN_PROGRESS";
      if (o.decline) declines.add(p.paymentKey);
      return p.paymentKey;
    },
    issueAuthKey(o = {}) {
      const authKey = `bln_${randomBytes(10).toString("hex")}`;
      authKeys.set(authKey, {
        number: o.number ?? "43301234****123*",
        company: o.company ?? "신한",
        decline: o.decline ?? false,
      });
      return authKey;
    },
    cancel(paymentKey, amount) {
      const p = payments.get(paymentKey);
      const res = cancel(p, amount, "고객 요청");
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
      return JSON.parse(JSON.stringify(p));
    },
    setDecline(billingKey, decline) {
      if (decline) declines.add(billingKey);
      else declines.delete(billingKey);
    },
    webhookBody(paymentKey) {
      return {
        eventType: "PAYMENT_STATUS_CHANGED",
        createdAt: iso(),
        data: JSON.parse(JSON.stringify(payments.get(paymentKey))),
      };
    },
    failNext(n) {
      failures = n;
    },
    close: server.close,
  };
}
