import { useEffect, useState } from "react";
import { api, unwrap, type CheckoutConfig, type Topup } from "../api";
import { money, useI18n } from "../i18n";
import { TextField } from "../fields";
import { Card, ErrorNote, Field, Notice, Spinner, Submit, useAction, useLoad } from "../ui";
import { StripeCheckout, TossCheckout } from "./checkout";

type Provider = "toss" | "stripe";

/** The amount typed, in the provider's unit (won; US cents from dollars with up to two decimals), or null. */
function providerAmount(provider: Provider, text: string): number | null {
  const s = text.trim().replace(/,/g, "");
  if (provider === "toss") return /^\d{1,12}$/.test(s) ? Number(s) : null;
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(s);
  return m ? Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0")) : null;
}

/**
 * Card top-up, finished in the provider's own checkout: choose a provider and amount, the top-up is created, the
 * provider's widget takes the card, and its redirect back here confirms the top-up (useCheckoutReturn).
 */
export function TopUp({ onDone }: { onDone: () => void }) {
  const { t, locale } = useI18n();
  const config = useLoad(async () => (await unwrap(api.GET("/v1/billing/checkout-config"))) as CheckoutConfig, []);
  const offered = (["toss", "stripe"] as const).filter((p) => config.data?.[p]);
  const [chosen, setChosen] = useState<Provider | null>(null);
  const provider = chosen && offered.includes(chosen) ? chosen : offered[0];
  const [amount, setAmount] = useState("10000");
  const [invalid, setInvalid] = useState<string | null>(null);
  const [topup, setTopup] = useState<Topup | null>(null);
  const back = useCheckoutReturn(onDone);
  const limits = config.data?.topup_limits;
  const range =
    provider === "stripe"
      ? limits && [
          money(locale, limits.usd_cents.min * 10_000, "USD"),
          money(locale, limits.usd_cents.max * 10_000, "USD"),
        ]
      : limits && [money(locale, limits.krw.min), money(locale, limits.krw.max)];
  const action = useAction(async (units: number) => {
    const currency = provider === "toss" ? "KRW" : "USD";
    setTopup((await unwrap(api.POST("/v1/billing/topups", { body: { provider, currency, amount: units } }))) as Topup);
  });
  const validate = () => {
    const units = providerAmount(provider, amount);
    const [min, max] =
      provider === "stripe"
        ? [limits?.usd_cents.min ?? 1, limits?.usd_cents.max ?? Infinity]
        : [limits?.krw.min ?? 1, limits?.krw.max ?? Infinity];
    if (units === null || units < min || units > max) {
      setInvalid(range ? t("bill.limits", { min: range[0], max: range[1] }) : t("v.positive"));
      return null;
    }
    setInvalid(null);
    return units;
  };

  return (
    <Card title={t("bill.topup")}>
      <CheckoutResult state={back} />
      <ErrorNote error={config.error} />
      {config.data && offered.length === 0 && <p className="muted">{t("bill.topupNone")}</p>}
      {!config.data && !config.error && <Spinner label={t("common.loading")} />}
      {topup && config.data ? (
        <>
          {topup.provider === "stripe" && config.data.stripe && (
            <StripeCheckout config={config.data.stripe} topup={topup} />
          )}
          {topup.provider === "toss" && config.data.toss && <TossCheckout config={config.data.toss} topup={topup} />}
          <button type="button" className="btn ghost" onClick={() => setTopup(null)}>
            {t("common.cancel")}
          </button>
        </>
      ) : (
        offered.length > 0 && (
          <form
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              const units = validate();
              if (units !== null) void action.run(units);
            }}
          >
            <Field label={t("bill.provider")}>
              {({ id }) => (
                <select
                  id={id}
                  value={provider}
                  onChange={(e) => {
                    setChosen(e.target.value as Provider);
                    setAmount(e.target.value === "stripe" ? "10" : "10000");
                    setInvalid(null);
                  }}
                >
                  {offered.includes("toss") && <option value="toss">Toss Payments (KRW)</option>}
                  {offered.includes("stripe") && <option value="stripe">Stripe (USD)</option>}
                </select>
              )}
            </Field>
            <TextField
              label={provider === "stripe" ? t("bill.amountUsd") : t("bill.amountKrw")}
              error={invalid}
              hint={range ? t("bill.limits", { min: range[0], max: range[1] }) : undefined}
              name="topup-amount"
              inputMode="decimal"
              value={amount}
              onValue={setAmount}
            />
            <ErrorNote error={action.error} />
            <Submit busy={action.busy}>{t("bill.topupGo")}</Submit>
          </form>
        )
      )}
    </Card>
  );
}

type ReturnState =
  { phase: "none" } | { phase: "confirming" } | { phase: "done"; topup: Topup } | { phase: "failed"; error: unknown };

/**
 * Back from the provider (/billing?topup=<id>&provider=… plus what the provider adds: Stripe's payment_intent and
 * redirect_status, Toss's paymentKey, orderId and amount, or its code and message on the fail URL): confirm the
 * top-up with the API, show how it ended, and take the query off the address so a reload does not repeat it.
 */
function useCheckoutReturn(onDone: () => void): ReturnState {
  const [state, setState] = useState<ReturnState>({ phase: "none" });
  useEffect(() => {
    const q = new URLSearchParams(window.location.search);
    const id = q.get("topup");
    if (!id) return;
    window.history.replaceState(null, "", "/billing");
    const failed = q.get("failed") === "1" || q.get("redirect_status") === "failed";
    if (failed) {
      const message = q.get("message") ?? "the payment was not completed";
      setState({
        phase: "failed",
        error: Object.assign(new Error(message), { code: q.get("code") ?? "payment_failed" }),
      });
      return;
    }
    const paymentKey = q.get("paymentKey");
    setState({ phase: "confirming" });
    unwrap(
      api.POST("/v1/billing/topups/{id}/confirm", {
        params: { path: { id } },
        body: q.get("provider") === "toss" && paymentKey ? { payment_key: paymentKey } : {},
      }),
    ).then(
      (topup) => {
        setState({ phase: "done", topup: topup as Topup });
        onDone();
      },
      (error) => setState({ phase: "failed", error }),
    );
  }, []);
  return state;
}

function CheckoutResult({ state }: { state: ReturnState }) {
  const { t, locale } = useI18n();
  if (state.phase === "none") return null;
  if (state.phase === "confirming") return <Spinner label={t("bill.confirming")} />;
  if (state.phase === "failed") return <ErrorNote error={state.error} />;
  const tp = state.topup;
  const amount = money(locale, tp.credit_amount, tp.currency);
  if (tp.status === "succeeded") return <Notice>{t("bill.topupDone", { amount })}</Notice>;
  if (tp.status === "failed")
    return (
      <ErrorNote
        error={Object.assign(new Error(t("bill.topupFailed", { message: tp.failure?.message ?? "" })), {
          code: tp.failure?.code ?? "payment_failed",
        })}
      />
    );
  return <p className="note warn">{t("bill.topupPending")}</p>;
}
