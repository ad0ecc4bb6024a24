/** What the partner billing routes answer (README.md here): invoices, statements, usage, the operator's actions. */
import { randomUUID } from "node:crypto";
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError, found, notFound } from "../../http/errors.js";
import { MICRO, postWithSystem } from "../../billing/public.js";
import { findPartner } from "../repo.js";
import * as repo from "./repo.js";

const invoiceView = (r: repo.InvoiceRow) => ({
  id: r.id,
  partner_id: r.partner_id,
  month: r.month,
  period_start: r.period_start.toISOString(),
  period_end: r.period_end.toISOString(),
  currency: r.currency,
  usage_micro: Number(r.usage_micro),
  adjustment_microusd: Number(r.adjustment_micro),
  total_micro: Number(r.total_micro),
  status: r.status,
  paid_at: r.paid_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
});

const PERIOD = /^(\d{4})-(0[1-9]|1[0-2])$/;

export function billingService(db: Db) {
  async function ownInvoice(partnerId: string, id: string) {
    const row = await repo.invoiceById(db, id);
    // another partner's invoice is no invoice of this one
    if (!row || row.partner_id !== partnerId) throw notFound("invoice");
    return row;
  }

  return {
    async invoices(partnerId: string) {
      return { invoices: (await repo.invoicesOf(db, partnerId)).map(invoiceView) };
    },

    async invoice(partnerId: string, id: string) {
      const row = await ownInvoice(partnerId, id);
      const statements = (await repo.statementsOf(db, id)).map((s) => ({ ...s, usage_micro: Number(s.usage_micro) }));
      return { ...invoiceView(row), statements };
    },

    /** Settled usage per child in a month (the current one by default); settlement runs 5-10 minutes behind. */
    async usage(partnerId: string, period: string | undefined, now = new Date()) {
      const p = period ?? now.toISOString().slice(0, 7);
      const m = PERIOD.exec(p);
      if (!m) throw new ApiError("invalid_request", `period must be a month as YYYY-MM (got ${JSON.stringify(p)}).`);
      const from = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1));
      const to = new Date(Date.UTC(Number(m[1]), Number(m[2]), 1));
      const lines = await repo.settledPerChild(db, partnerId, from, to);
      const children = lines.map((l) => ({
        child_id: l.child_id,
        external_ref: l.external_ref,
        windows: l.windows,
        usage_micro: l.krw * MICRO,
      }));
      return {
        period: p,
        currency: "KRW",
        total_micro: children.reduce((s, c) => s + c.usage_micro, 0),
        children,
      };
    },

    async operatorList(status: "unpaid" | "paid" | undefined) {
      return { invoices: (await repo.invoicesByStatus(db, status ?? null)).map(invoiceView) };
    },

    /** The operator records a payment received: it credits the partner's wallet by the total, once. */
    async operatorMarkPaid(caller: Principal | null, id: string) {
      return auditedTransaction(db, caller, async (tx) => {
        const row = found(await repo.invoiceById(tx, id, { forUpdate: true }), "invoice");
        if (row.status === "unpaid") {
          const { transaction } = await postWithSystem(tx, {
            owner: { kind: "partner", id: row.partner_id },
            system: "payments-clearing",
            amount: Number(row.total_micro) / MICRO,
            currency: "KRW",
            source: { type: "invoice", id: row.id },
            idempotencyKey: `partner-invoice:${row.id}:paid`,
            memo: `partner invoice ${row.month} paid`,
          });
          await repo.markPaid(tx, row.id, transaction.id);
        }
        return invoiceView((await repo.invoiceById(tx, id))!);
      });
    },

    /** A reduction or refund for a partner: credits its wallet; the month's invoice subtracts it as adjustment. */
    async operatorAdjust(caller: Principal | null, partnerId: string, input: { amount_krw: number; reason: string }) {
      return auditedTransaction(db, caller, async (tx) => {
        if (!(await findPartner(tx, partnerId))) throw notFound("partner");
        const sourceId = randomUUID();
        const { transaction } = await postWithSystem(tx, {
          owner: { kind: "partner", id: partnerId },
          system: "adjustments",
          amount: input.amount_krw,
          currency: "KRW",
          source: { type: "adjustment", id: sourceId },
          idempotencyKey: `partner-adjustment:${sourceId}`,
          memo: input.reason,
        });
        return {
          transaction_id: transaction.id,
          partner_id: partnerId,
          amount_krw: input.amount_krw,
          reason: input.reason,
          created_at: transaction.created_at.toISOString(),
        };
      });
    },
  };
}

export type BillingService = ReturnType<typeof billingService>;
