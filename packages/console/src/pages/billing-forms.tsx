import { useState } from "react";
import { api, unwrap } from "../api";
import { money, useI18n, when } from "../i18n";
import { TextField } from "../fields";
import { Card, ErrorNote, Notice, Submit, useAction, useLoad } from "../ui";

const whole = (s: string) => /^\d{1,12}$/.test(s.trim()) && Number(s) > 0;

export function AutoRecharge() {
  const { t } = useI18n();
  const current = useLoad(async () => await unwrap(api.GET("/v1/billing/auto-recharge")), []);
  const [enabled, setEnabled] = useState<boolean | null>(null);
  const [threshold, setThreshold] = useState<string | null>(null);
  const [amount, setAmount] = useState<string | null>(null);
  const [errors, setErrors] = useState<{ threshold?: string; amount?: string }>({});
  const [done, setDone] = useState(false);
  const on = enabled ?? current.data?.enabled ?? false;
  // amount 0: never set, so the form suggests values instead of showing zeros
  const set = !!current.data?.amount;
  const th = threshold ?? String(set ? current.data!.threshold : 10000);
  const am = amount ?? String(set ? current.data!.amount : 50000);
  const action = useAction(async () => {
    await unwrap(
      api.PUT("/v1/billing/auto-recharge", { body: { enabled: on, threshold: Number(th), amount: Number(am) } }),
    );
    setDone(true);
    current.reload();
  });
  return (
    <Card title={t("bill.auto")}>
      <p className="muted">{t("bill.autoHint")}</p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          const errs = {
            threshold: whole(th) ? undefined : t("v.positive"),
            amount: whole(am) ? undefined : t("v.positive"),
          };
          setErrors(errs);
          if (!errs.threshold && !errs.amount) void action.run();
        }}
      >
        <label className="check">
          <input type="checkbox" checked={on} onChange={(e) => setEnabled(e.target.checked)} />
          {t("bill.enabled")}
        </label>
        <TextField
          label={t("bill.threshold")}
          error={errors.threshold}
          inputMode="numeric"
          value={th}
          onValue={setThreshold}
        />
        <TextField
          label={t("bill.autoAmount")}
          error={errors.amount}
          inputMode="numeric"
          value={am}
          onValue={setAmount}
        />
        <ErrorNote error={action.error || current.error} />
        {done && <Notice>{t("common.saved")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}

export function BankTransfer() {
  const { t, locale } = useI18n();
  const config = useLoad(async () => await unwrap(api.GET("/v1/billing/bank-transfer/config")), []);
  const list = useLoad(
    async () => await unwrap(api.GET("/v1/billing/bank-transfers", { params: { query: { limit: 5 } } })),
    [],
  );
  const [amount, setAmount] = useState("");
  const [depositor, setDepositor] = useState("");
  const [errors, setErrors] = useState<{ amount?: string; depositor?: string }>({});
  const action = useAction(async () => {
    await unwrap(
      api.POST("/v1/billing/bank-transfers", {
        body: { amount_krw: Number(amount), depositor_name: depositor.trim(), receipt_type: "none" },
      }),
    );
    setAmount("");
    list.reload();
  });
  const account = config.data?.deposit_account;
  return (
    <Card title={t("bill.bank")}>
      {!account?.account_number ? (
        <p className="muted">{t("bill.bankOff")}</p>
      ) : (
        <>
          <p>
            {t("bill.bankTo", {
              bank: account.bank_name ?? "",
              account: account.account_number,
              holder: account.account_holder ?? "",
            })}
          </p>
          <form
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              const min = config.data?.min_amount_krw ?? 1;
              const max = config.data?.max_amount_krw ?? 1e10;
              const n = Number(amount);
              const errs = {
                amount: whole(amount) && n >= min && n <= max ? undefined : t("v.range", { min, max }),
                depositor: depositor.trim() ? undefined : t("v.required"),
              };
              setErrors(errs);
              if (!errs.amount && !errs.depositor) void action.run();
            }}
          >
            <TextField
              label={t("bill.amount")}
              error={errors.amount}
              inputMode="numeric"
              value={amount}
              onValue={setAmount}
            />
            <TextField label={t("bill.depositor")} error={errors.depositor} value={depositor} onValue={setDepositor} />
            <ErrorNote error={action.error} />
            <Submit busy={action.busy}>{t("bill.bankRequest")}</Submit>
          </form>
        </>
      )}
      <ErrorNote error={config.error || list.error} />
      {(list.data?.items ?? []).length > 0 && (
        <ul className="rows">
          {list.data!.items.map((x) => (
            <li key={x.id}>
              <span>{money(locale, x.amount_krw)}</span>
              <span className="muted">{when(locale, x.created_at)}</span>
              <span className="badge">{x.status}</span>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
