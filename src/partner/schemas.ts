/** Shared schema pieces of the partner area: auth rules, the profile, opaque references and visitor URLs. */
import { Type } from "@sinclair/typebox";
import type { AuthRule } from "../http/auth-rule.js";
import { ApiError, type ErrorCode } from "../http/errors.js";
import { Nullable, Timestamp } from "../http/schemas.js";
import type { PartnerRow } from "./repo.js";

export const tags = ["partner"];
export const read: AuthRule = { scope: "partner:read" };
export const write: AuthRule = { scope: "partner:write" };
/** what every /v1/partner route can answer beyond its own codes (guard.ts) */
export const PARTNER_ERRORS: ErrorCode[] = ["partner_required"];

/** The path of the operator's routes about one partner: the partner's account. */
export const PartnerAccountParams = Type.Object({ account_id: Type.String({ format: "uuid" }) });

export const BillingMode = Type.Union([Type.Literal("child_prepaid"), Type.Literal("partner_postpaid")]);

export const Partner = Type.Object({
  account_id: Type.String(),
  billing_mode: BillingMode,
  monthly_limit_krw: Nullable(Type.Integer({ description: "partner monthly limit in KRW; null: none" })),
  month_usage_krw: Type.Integer({ description: "this month's usage of all children so far, in KRW" }),
  child_count: Type.Integer(),
  visitor_login_url: Nullable(Type.String()),
  child_scopes: Type.Array(Type.String(), { description: "the most a child token may carry" }),
  created_at: Timestamp,
});

export const partnerView = (r: PartnerRow, extra: { usage: number; children: number; childScopes: string[] }) => ({
  account_id: r.account_id,
  billing_mode: r.billing_mode,
  monthly_limit_krw: r.monthly_limit_krw,
  month_usage_krw: extra.usage,
  child_count: extra.children,
  visitor_login_url: r.visitor_login_url,
  child_scopes: extra.childScopes,
  created_at: r.created_at.toISOString(),
});

/** An opaque identifier the partner makes (external_ref, tenant_ref, subject_ref, invited_refs). */
export const OpaqueRef = Type.String({ minLength: 1, maxLength: 200 });

/**
 * Spec (Partner features 12): people are identified by opaque refs, never an e-mail. A value containing "@" or
 * whitespace is refused with 400, naming the field; the platform only compares values.
 */
export function assertOpaque(field: string, value: string | null | undefined): void {
  if (value === null || value === undefined) return;
  if (value.includes("@") || /\s/.test(value))
    throw new ApiError(
      "invalid_request",
      `${field} must be an opaque identifier made by the partner: no e-mail address (@) and no whitespace.`,
    );
}

/** visitor_login_url: https, or http on a loopback host (local development and tests). */
export function assertVisitorUrl(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError("invalid_request", "visitor_login_url must be an absolute URL.");
  }
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url.protocol === "https:" || (url.protocol === "http:" && loopback)) return;
  throw new ApiError("invalid_request", "visitor_login_url must use https (http only on localhost).");
}
