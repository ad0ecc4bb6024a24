import { useState } from "react";
import { api, unwrap } from "../api";
import { money, useI18n, when } from "../i18n";
import { Card, ErrorNote, Spinner, useLoad } from "../ui";
import { UsageChart } from "./usage-chart";
import { AutoRecharge, BankTransfer } from "./billing-forms";
import { TopUp } from "./topup";

interface Tx {
  id: string;
  type: string;
  amount: number;
  currency: string;
  balance_after: number | null;
  memo: string | null;
  created_at: string;
}

export function BillingPage() {
  const { t, locale } = useI18n();
  const balance = useLoad(async () => await unwrap(api.GET("/v1/billing/balance")), []);
  const b = balance.data;
  return (
    <>
      <h1>{t("bill.title")}</h1>
      <ErrorNote error={balance.error} />
      <div className="stats">
        <div className="stat">
          <span className="stat-label">{t("bill.balance")}</span>
          <span className="stat-value" data-testid="balance">
            {b ? money(locale, b.balance) : <Spinner />}
          </span>
          {b?.balances
            ?.filter((x) => x.currency !== "KRW")
            .map((x) => (
              <span key={x.currency} className="muted">
                {money(locale, x.balance, x.currency)}
              </span>
            ))}
        </div>
        <div className="stat">
          <span className="stat-label">{t("bill.burn")}</span>
          <span className="stat-value">
            {b ? t("bill.perHour", { amount: money(locale, b.burn_rate_krw_per_hour) }) : <Spinner />}
          </span>
          {b && (
            <span className="muted">
              {b.hours_left != null ? t("bill.hoursLeft", { hours: b.hours_left }) : t("bill.noBurn")}
            </span>
          )}
        </div>
      </div>
      {b?.overdue && <p className="note error">{t("bill.overdue", { since: when(locale, b.overdue_since) })}</p>}
      <Card title={t("bill.usage")}>
        <UsageChart />
      </Card>
      <div className="grid three">
        <TopUp onDone={balance.reload} />
        <AutoRecharge />
        <BankTransfer />
      </div>
      <Transactions />
    </>
  );
}

function Transactions() {
  const { t, locale } = useI18n();
  const [pages, setPages] = useState<string[]>([""]);
  const [items, setItems] = useState<Tx[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const cursor = pages[pages.length - 1];
  const page = useLoad(async () => {
    const res = await unwrap(
      api.GET("/v1/billing/transactions", { params: { query: { limit: 20, ...(cursor ? { cursor } : {}) } } }),
    );
    setItems((prev) => (cursor ? [...prev, ...(res.items as Tx[])] : (res.items as Tx[])));
    setNext(res.next_cursor ?? null);
    return res;
  }, [cursor]);
  return (
    <Card title={t("bill.transactions")}>
      <ErrorNote error={page.error} />
      {page.data && items.length === 0 && <p className="empty">{t("bill.noTx")}</p>}
      {items.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>{t("bill.date")}</th>
                <th>{t("bill.type")}</th>
                <th className="right">{t("bill.amount")}</th>
                <th className="right">{t("bill.after")}</th>
                <th>{t("bill.memo")}</th>
              </tr>
            </thead>
            <tbody>
              {items.map((x) => (
                <tr key={x.id}>
                  <td>{when(locale, x.created_at)}</td>
                  <td>
                    <span className="chip">{x.type}</span>
                  </td>
                  <td className={`right num ${x.amount < 0 ? "neg" : "pos"}`}>{money(locale, x.amount, x.currency)}</td>
                  <td className="right num">
                    {x.balance_after == null ? "—" : money(locale, x.balance_after, x.currency)}
                  </td>
                  <td>{x.memo ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" className="btn" onClick={() => setPages((p) => [...p, next])}>
          {t("common.more")}
        </button>
      )}
    </Card>
  );
}
