import type { PaymentsConfig } from "../../config/config.js";

/** The fields of Toss Payments' Payment object this platform reads (API version 2022-11-16). */
export interface TossPayment {
  paymentKey: string;
  orderId: string;
  orderName?: string;
  /** READY, IN_PROGRESS, WAITING_FOR_DEPOSIT, DONE, CANCELED, PARTIAL_CANCELED, ABORTED, EXPIRED */
  status: string;
  type?: string;
  currency: string;
  totalAmount: number;
  balanceAmount: number;
  approvedAt?: string | null;
  cancels?: { cancelAmount: number; transactionKey: string; canceledAt: string; cancelReason?: string }[] | null;
  card?: { number?: string; issuerCode?: string; cardType?: string } | null;
  failure?: { code: string; message: string } | null;
}

/** Answer of the billing-key issue API (자동결제 빌링키 발급). */
export interface TossBillingAuth {
  billingKey: string;
  customerKey: string;
  cardCompany?: string;
  cardNumber?: string;
  card?: { number?: string; issuerCode?: string; cardType?: string } | null;
}

/** A refusal from Toss: its documented {code, message} body and the HTTP status. */
export class TossError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface TossClient {
  confirm(input: { paymentKey: string; orderId: string; amount: number }): Promise<TossPayment>;
  getPayment(paymentKey: string): Promise<TossPayment>;
  getPaymentByOrderId(orderId: string): Promise<TossPayment>;
  issueBillingKey(input: { authKey: string; customerKey: string }): Promise<TossBillingAuth>;
  chargeBillingKey(
    billingKey: string,
    input: { customerKey: string; amount: number; orderId: string; orderName: string },
    idempotencyKey: string,
  ): Promise<TossPayment>;
}

const TIMEOUT_MS = 30_000;

/** Toss Payments core API over fetch: Basic auth with the secret key and an empty password. */
export function tossClient(config: PaymentsConfig["toss"]): TossClient | null {
  if (!config.secretKey) return null;
  const base = config.apiBase.replace(/\/+$/, "");
  const auth = "Basic " + Buffer.from(`${config.secretKey}:`).toString("base64");

  async function request<T>(method: "GET" | "POST", path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    const headers: Record<string, string> = { authorization: auth };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new TossError(
        0,
        "NETWORK_ERROR",
        `Toss Payments could not be reached: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      throw new TossError(
        res.status,
        "BAD_RESPONSE",
        `Toss Payments answered ${res.status} with a body that is not JSON.`,
      );
    }
    if (!res.ok) {
      const e = (parsed ?? {}) as { code?: string; message?: string };
      throw new TossError(res.status, e.code ?? "UNKNOWN", e.message ?? `Toss Payments answered ${res.status}.`);
    }
    return parsed as T;
  }

  return {
    confirm: (input) => request<TossPayment>("POST", "/v1/payments/confirm", input),
    getPayment: (paymentKey) => request<TossPayment>("GET", `/v1/payments/${encodeURIComponent(paymentKey)}`),
    getPaymentByOrderId: (orderId) => request<TossPayment>("GET", `/v1/payments/orders/${encodeURIComponent(orderId)}`),
    issueBillingKey: (input) => request<TossBillingAuth>("POST", "/v1/billing/authorizations/issue", input),
    chargeBillingKey: (billingKey, input, idempotencyKey) =>
      request<TossPayment>("POST", `/v1/billing/${encodeURIComponent(billingKey)}`, input, idempotencyKey),
  };
}

/** Total cancelled (refunded) so far according to Toss. */
export function tossRefunded(p: TossPayment): number {
  const fromCancels = (p.cancels ?? []).reduce((sum, c) => sum + c.cancelAmount, 0);
  return Math.max(fromCancels, p.totalAmount - p.balanceAmount);
}
