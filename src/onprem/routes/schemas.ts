import { Type, type Static } from "@sinclair/typebox";
import type { AuthRule } from "../../http/auth-rule.js";
import { Nullable, Timestamp } from "../../http/schemas.js";
import type { AccessRow } from "../repo/access.js";
import type { LicenseRow, OrderRow } from "../repo/licenses.js";
import type { ReleaseRow } from "../repo/releases.js";

export const tags = ["onprem"];
export const account: AuthRule = { account: true };
export const operator: AuthRule = { operator: true };
export const open: AuthRule = { public: true };

export const ScopeField = Type.Union([Type.Literal("me"), Type.Literal("org")], {
  description: "me: the caller's account; org: the caller's organization (changes need the role admin or owner)",
});
/** A body with its optional scope defaulted to "me" (the caller's own account). */
export const withScope = <B extends { scope?: "me" | "org" }>(body: B): B & { scope: "me" | "org" } => ({
  ...body,
  scope: body.scope ?? "me",
});
export const IdParams = Type.Object({ id: Type.String({ format: "uuid" }) });
export const OwnerView = Type.Object({ kind: Type.String(), id: Type.String() });
export const Customer = Type.String({ minLength: 1, maxLength: 200, description: "the licensed company's name" });

const ts = (d: Date | null) => (d ? d.toISOString() : null);

/** Whose an inquiry, license or order is: the scope it was asked in and the owner it names. */
export const OwnedFields = { scope: ScopeField, owner: OwnerView };
const ownedView = (r: { owner_kind: string; owner_id: string }) => ({
  scope: r.owner_kind === "org" ? ("org" as const) : ("me" as const),
  owner: { kind: r.owner_kind, id: r.owner_id },
});
/** What a license covers, and an order buys: its owner, the licensed company and how many hosts. */
const CoverageFields = { ...OwnedFields, customer: Type.String(), hosts: Type.Integer() };
const coverageView = (r: { owner_kind: string; owner_id: string; customer: string; hosts: number }) => ({
  ...ownedView(r),
  customer: r.customer,
  hosts: r.hosts,
});

export const Inquiry = Type.Object({
  id: Type.String(),
  ...OwnedFields,
  account_id: Type.String({ description: "who asked" }),
  requester_email: Type.String(),
  company: Type.String(),
  contact: Type.String(),
  message: Type.String(),
  status: Type.Union([Type.Literal("pending"), Type.Literal("approved"), Type.Literal("rejected")]),
  note: Nullable(Type.String({ description: "the operator's note (a rejection's reason)" })),
  created_at: Timestamp,
  decided_at: Nullable(Timestamp),
});
export const inquiryView = (r: AccessRow) => ({
  id: r.id,
  ...ownedView(r),
  account_id: r.account_id,
  requester_email: r.requester_email,
  company: r.company,
  contact: r.contact,
  message: r.message,
  status: r.status,
  note: r.note,
  created_at: r.created_at.toISOString(),
  decided_at: ts(r.decided_at),
});

export const License = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal("trial"), Type.Literal("paid")]),
  ...CoverageFields,
  not_before: Timestamp,
  not_after: Timestamp,
  features: Type.Array(Type.String()),
  issued_at: Timestamp,
  key_id: Type.String({ description: "the signing key (GET /v1/onprem/license-key)" }),
  order_id: Nullable(Type.String()),
  renews: Nullable(Type.String({ description: "the license this one renews" })),
  status: Type.Union([Type.Literal("active"), Type.Literal("scheduled"), Type.Literal("expired")]),
});
export function licenseView(r: LicenseRow, now = Date.now()) {
  return {
    id: r.id,
    kind: r.kind,
    ...coverageView(r),
    not_before: r.not_before.toISOString(),
    not_after: r.not_after.toISOString(),
    features: r.features,
    issued_at: r.issued_at.toISOString(),
    key_id: r.key_id,
    order_id: r.order_id,
    renews: r.renews,
    status:
      now < r.not_before.getTime()
        ? ("scheduled" as const)
        : now >= r.not_after.getTime()
          ? ("expired" as const)
          : ("active" as const),
  };
}

export const LicenseFile = Type.Object({
  license: Type.Object({
    license_id: Type.String(),
    customer: Type.String(),
    owner: OwnerView,
    hosts: Type.Integer(),
    not_before: Timestamp,
    not_after: Timestamp,
    features: Type.Array(Type.String()),
    issued_at: Timestamp,
  }),
  signature: Type.String({ description: "Ed25519 over the canonical JSON of license, base64" }),
  key_id: Type.String(),
});

export const Payment = Type.Object(
  {
    provider: Type.Literal("toss"),
    order_id: Type.String({ description: "orderId for the Toss payment window" }),
    amount: Type.Integer({ description: "amount for the payment window, KRW" }),
    order_name: Type.String(),
    customer_key: Type.String(),
    client_key: Nullable(Type.String({ description: "TOSS_CLIENT_KEY, the payment widget's key" })),
  },
  { description: "what the Toss payment window runs with" },
);
export const Order = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal("pending"), Type.Literal("paid")]),
  ...CoverageFields,
  months: Type.Integer(),
  amount_krw: Type.Integer(),
  renew_of: Nullable(Type.String()),
  license_id: Nullable(Type.String({ description: "the license issued once paid" })),
  failure: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  payment: Payment,
  created_at: Timestamp,
  paid_at: Nullable(Timestamp),
});
export const orderView = (r: { order: OrderRow; payment: Static<typeof Payment> }) => ({
  id: r.order.id,
  status: r.order.status,
  ...coverageView(r.order),
  months: r.order.months,
  amount_krw: r.order.amount_krw,
  renew_of: r.order.renew_of,
  license_id: r.order.license_id,
  failure:
    r.order.failure_code !== null ? { code: r.order.failure_code, message: r.order.failure_message ?? "" } : null,
  payment: r.payment,
  created_at: r.order.created_at.toISOString(),
  paid_at: ts(r.order.paid_at),
});

export const Release = Type.Object({
  id: Type.String(),
  version: Type.String(),
  architecture: Type.String(),
  size: Type.Integer({ description: "bytes" }),
  sha256: Type.String(),
  filename: Type.String(),
  published_at: Timestamp,
});
export const releaseView = (r: ReleaseRow) => ({
  id: r.id,
  version: r.version,
  architecture: r.architecture,
  size: r.size,
  sha256: r.sha256,
  filename: r.filename,
  published_at: r.published_at.toISOString(),
});
