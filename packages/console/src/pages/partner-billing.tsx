import { useState } from "react";
import { api, unwrap, type PartnerInvoice } from "../api";
import { money, useI18n, when, type Locale, type MessageKey } from "../i18n";
import { Loaded, ResourceTable } from "../lists";
import { Card, ErrorNote, Spinner, useLoad } from "../ui";

/** Amounts of partner billing are micro-units of the currency (src/partner/billing/README.md). */
const micro = (locale: Locale, amount: number, currency: string) => money(locale, amount / 1_000_000, currency);

/** This UTC month as the API names periods (YYYY-MM). */
const currentPeriod = () => new Date().toISOString().slice(0, 7);

/** Settled usage per child in the current month (GET /v1/partner/usage?period=YYYY-MM). */
export function PartnerUsage() {
  const { t, locale } = useI18n();
  const period = currentPeriod();
  const usage = useLoad(() => unwrap(api.GET("/v1/partner/usage", { params: { query: { period } } })), [period]);
  const rows = usage.data?.children.map((c) => ({ ...c, id: c.child_id })) ?? null;
  return (
    <Card
      title={t("partner.usage", { period })}
      actions={
        usage.data && (
          <span className="muted">
            {t("partner.total", { amount: micro(locale, usage.data.total_micro, usage.data.currency) })}
          </span>
        )
      }
    >
      <p className="muted">{t("partner.usageHint")}</p>
      <Loaded list={{ data: rows, error: usage.error }} empty={t("partner.noUsage")}>
        {(list) => (
          <ResourceTable
            rows={list}
            testId="partner-usage"
            columns={[
              { head: t("partner.externalRef"), cell: (c) => <code>{c.external_ref}</code> },
              { head: t("partner.windows"), className: "right num", cell: (c) => c.windows },
              {
                head: t("partner.amount"),
                className: "right num",
                cell: (c) => micro(locale, c.usage_micro, usage.data!.currency),
              },
            ]}
          />
        )}
      </Loaded>
    </Card>
  );
}

/** Monthly invoices, newest first; a row opens its statement per child (GET /v1/partner/invoices/{id}). */
export function PartnerInvoices() {
  const { t, locale } = useI18n();
  const invoices = useLoad(async () => (await unwrap(api.GET("/v1/partner/invoices"))).invoices, []);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Card title={t("partner.invoices")}>
      <Loaded list={invoices} empty={t("partner.noInvoices")}>
        {(rows) => (
          <ResourceTable
            rows={rows}
            testId="partner-invoices"
            columns={[
              { head: t("partner.month"), cell: (i) => i.month },
              {
                head: t("partner.status"),
                cell: (i) => (
                  <span className={`badge state-${i.status}`} title={i.paid_at ? when(locale, i.paid_at) : undefined}>
                    {t(`partner.status.${i.status}` as MessageKey)}
                  </span>
                ),
              },
              {
                head: t("partner.amount"),
                className: "right num",
                cell: (i) => micro(locale, i.usage_micro, i.currency),
              },
              {
                head: t("partner.adjustment"),
                className: "right num",
                cell: (i) => micro(locale, i.adjustment_microusd, i.currency),
              },
              {
                head: t("partner.invoiceTotal"),
                className: "right num",
                cell: (i) => micro(locale, i.total_micro, i.currency),
              },
              {
                head: t("partner.details"),
                cellClass: "right",
                cell: (i) => (
                  <button
                    type="button"
                    className="btn small"
                    aria-expanded={open === i.id}
                    onClick={() => setOpen(open === i.id ? null : i.id)}
                  >
                    {open === i.id ? t("partner.hide") : t("partner.details")}
                  </button>
                ),
              },
            ]}
          />
        )}
      </Loaded>
      {open && invoices.data?.some((i) => i.id === open) && (
        <InvoiceDetail invoice={invoices.data.find((i) => i.id === open)!} />
      )}
    </Card>
  );
}

function InvoiceDetail({ invoice }: { invoice: PartnerInvoice }) {
  const { t, locale } = useI18n();
  const detail = useLoad(
    () => unwrap(api.GET("/v1/partner/invoices/{id}", { params: { path: { id: invoice.id } } })),
    [invoice.id],
  );
  const rows = detail.data?.statements.map((s) => ({ ...s, id: s.child_id })) ?? null;
  return (
    <section className="invoice-detail" data-testid="partner-invoice-detail">
      <h3>{t("partner.statements", { month: invoice.month })}</h3>
      <ErrorNote error={detail.error} />
      {!detail.data && !detail.error && <Spinner label={t("common.loading")} />}
      {rows && (
        <Loaded list={{ data: rows, error: null }} empty={t("partner.noStatements")}>
          {(list) => (
            <ResourceTable
              rows={list}
              columns={[
                { head: t("partner.externalRef"), cell: (s) => <code>{s.external_ref}</code> },
                { head: t("partner.windows"), className: "right num", cell: (s) => s.windows },
                {
                  head: t("partner.amount"),
                  className: "right num",
                  cell: (s) => micro(locale, s.usage_micro, invoice.currency),
                },
              ]}
            />
          )}
        </Loaded>
      )}
    </section>
  );
}
