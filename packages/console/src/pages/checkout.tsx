import { useEffect, useRef, useState } from "react";
import { type CheckoutConfig, type Topup } from "../api";
import { money, useI18n } from "../i18n";
import { ErrorNote, Spinner, useAction } from "../ui";

/*
 * The providers' own checkout UIs, loaded from their script URLs (GET /v1/billing/checkout-config; the page's CSP
 * allows exactly those origins). Card details go from the provider's frames to the provider; the console only
 * creates the top-up before and confirms it after the provider sends the browser back to /billing.
 */

interface StripeError {
  message?: string;
  code?: string;
  type?: string;
}
interface StripeElement {
  mount(target: HTMLElement | string): void;
  destroy?(): void;
}
interface StripeElements {
  create(type: "payment", options?: object): StripeElement;
}
interface StripeJs {
  elements(options: { clientSecret: string; locale?: string; appearance?: object }): StripeElements;
  confirmPayment(options: {
    elements: StripeElements;
    confirmParams: { return_url: string };
  }): Promise<{ error?: StripeError }>;
}
interface TossWidgets {
  setAmount(amount: { currency: "KRW"; value: number }): Promise<void>;
  renderPaymentMethods(options: { selector: string; variantKey?: string }): Promise<unknown>;
  renderAgreement(options: { selector: string; variantKey?: string }): Promise<unknown>;
  requestPayment(options: { orderId: string; orderName: string; successUrl: string; failUrl: string }): Promise<void>;
}
interface TossPaymentsFn {
  (clientKey: string): { widgets(options: { customerKey: string }): TossWidgets };
  ANONYMOUS?: string;
}
declare global {
  interface Window {
    Stripe?: (publishableKey: string, options?: { locale?: string }) => StripeJs;
    TossPayments?: TossPaymentsFn;
  }
}

const loading = new Map<string, Promise<void>>();

/** Adds the provider's script once per page; a failed load may be tried again. */
export function loadScript(src: string): Promise<void> {
  let p = loading.get(src);
  if (!p) {
    p = new Promise<void>((resolve, reject) => {
      const s = document.createElement("script");
      s.src = src;
      s.async = true;
      s.onload = () => resolve();
      s.onerror = () => {
        loading.delete(src);
        s.remove();
        reject(new Error(`could not load ${src}`));
      };
      document.head.appendChild(s);
    });
    loading.set(src, p);
  }
  return p;
}

/** Where the provider sends the browser back: the billing page, which then confirms the top-up. */
export const returnUrl = (topup: Topup, extra: Record<string, string> = {}) =>
  `${window.location.origin}/billing?${new URLSearchParams({ topup: topup.id, provider: topup.provider, ...extra })}`;

/** A provider error in the ErrorNote's shape: its message in words and its code. */
class ProviderError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}
const providerError = (e: unknown, fallback: string) => {
  const err = e as { message?: string; code?: string } | null;
  return new ProviderError(err?.message || fallback, err?.code ?? null);
};

function useMounted(mount: (box: HTMLDivElement) => Promise<() => void>, deps: unknown[]) {
  const box = useRef<HTMLDivElement>(null);
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let alive = true;
    let cleanup = () => {};
    setReady(false);
    setError(null);
    mount(box.current!).then(
      (done) => {
        if (alive) setReady(true);
        cleanup = done;
      },
      (err) => alive && setError(err),
    );
    return () => {
      alive = false;
      cleanup();
    };
  }, deps);
  return { box, ready, error };
}

/** Stripe's Payment Element for the top-up's PaymentIntent; paying redirects through Stripe back to /billing. */
export function StripeCheckout({ config, topup }: { config: NonNullable<CheckoutConfig["stripe"]>; topup: Topup }) {
  const { t, locale } = useI18n();
  const stripe = useRef<{ js: StripeJs; elements: StripeElements } | null>(null);
  const widget = useMounted(
    async (box) => {
      await loadScript(config.js_url);
      if (!window.Stripe || !topup.client_secret) throw new Error(t("bill.checkoutLoading"));
      const js = window.Stripe(config.publishable_key, { locale });
      const elements = js.elements({ clientSecret: topup.client_secret, locale });
      const element = elements.create("payment");
      element.mount(box);
      stripe.current = { js, elements };
      return () => element.destroy?.();
    },
    [topup.id],
  );
  const pay = useAction(async () => {
    const s = stripe.current!;
    const { error } = await s.js.confirmPayment({
      elements: s.elements,
      confirmParams: { return_url: returnUrl(topup) },
    });
    // only an immediate failure comes back here (a declined card, a field left empty); success leaves the page
    if (error) throw providerError(error, "Stripe refused the payment");
  });
  return (
    <PayPanel
      provider="Stripe"
      amount={money(locale, topup.credit_amount, topup.currency)}
      widget={widget}
      pay={pay}
      boxes={<div ref={widget.box} className="provider-widget" data-testid="stripe-element" />}
    />
  );
}

/** Toss Payments' payment widget (SDK v2): methods and agreement, then its payment window, then back to /billing. */
export function TossCheckout({ config, topup }: { config: NonNullable<CheckoutConfig["toss"]>; topup: Topup }) {
  const { t, locale } = useI18n();
  const widgets = useRef<TossWidgets | null>(null);
  const widget = useMounted(async () => {
    await loadScript(config.js_url);
    const Toss = window.TossPayments;
    if (!Toss) throw new Error(t("bill.checkoutLoading"));
    const w = Toss(config.client_key).widgets({ customerKey: Toss.ANONYMOUS ?? "ANONYMOUS" });
    await w.setAmount({ currency: "KRW", value: topup.amount });
    await Promise.all([
      w.renderPaymentMethods({ selector: "#toss-payment-methods", variantKey: "DEFAULT" }),
      w.renderAgreement({ selector: "#toss-agreement", variantKey: "AGREEMENT" }),
    ]);
    widgets.current = w;
    return () => {
      for (const id of ["toss-payment-methods", "toss-agreement"]) document.getElementById(id)?.replaceChildren();
    };
  }, [topup.id]);
  const pay = useAction(async () => {
    try {
      await widgets.current!.requestPayment({
        orderId: topup.order_id,
        orderName: topup.order_name,
        successUrl: returnUrl(topup),
        failUrl: returnUrl(topup, { failed: "1" }),
      });
    } catch (err) {
      throw providerError(err, "Toss Payments refused the payment");
    }
  });
  return (
    <PayPanel
      provider="Toss Payments"
      amount={money(locale, topup.amount, "KRW")}
      widget={widget}
      pay={pay}
      boxes={
        <div ref={widget.box} className="provider-widget">
          <div id="toss-payment-methods" />
          <div id="toss-agreement" />
        </div>
      }
    />
  );
}

function PayPanel(props: {
  provider: string;
  amount: string;
  widget: { ready: boolean; error: unknown };
  pay: ReturnType<typeof useAction<[]>>;
  boxes: React.ReactNode;
}) {
  const { t } = useI18n();
  const { widget, pay } = props;
  return (
    <div className="checkout">
      {!widget.ready && !widget.error && <Spinner label={t("bill.checkoutLoading")} />}
      <ErrorNote error={widget.error} />
      {props.boxes}
      <p className="hint">{t("bill.secureNote", { provider: props.provider })}</p>
      <ErrorNote error={pay.error} />
      <button
        type="button"
        className="btn primary"
        disabled={!widget.ready || pay.busy}
        aria-busy={pay.busy}
        onClick={() => void pay.run()}
      >
        {pay.busy ? <Spinner label={t("common.working")} /> : t("bill.pay", { amount: props.amount })}
      </button>
    </div>
  );
}
