import { Type } from "@sinclair/typebox";
import { Body, Nullable, Timestamp } from "../http/schemas.js";

export const Me = Type.Object({
  id: Type.String(),
  email: Type.String(),
  display_name: Nullable(Type.String()),
  locale: Type.Union([Type.Literal("ko"), Type.Literal("en")]),
  has_password: Type.Boolean(),
  created_at: Timestamp,
  account_spend_cap_krw: Type.Integer(),
  account_spend_cap_is_default: Type.Boolean(),
  app_spend_cap_krw: Type.Integer(),
  app_spend_cap_is_default: Type.Boolean(),
});

export const SpendCaps = Type.Object({
  account_spend_cap_krw: Type.Integer(),
  account_spend_cap_is_default: Type.Boolean(),
  app_spend_cap_krw: Type.Integer(),
  app_spend_cap_is_default: Type.Boolean(),
});

export const CapBody = Body({
  amount_krw: Type.Integer({
    minimum: 0,
    maximum: 1_000_000_000_000,
    description: "KRW per month; 0 restores the platform default",
  }),
});

export const AuditPage = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.String(),
      actor: Type.String(),
      token_id: Nullable(Type.String()),
      token_kind: Nullable(Type.String()),
      action: Type.String(),
      target: Nullable(Type.String()),
      ip: Nullable(Type.String()),
      status: Type.Integer(),
      request_id: Nullable(Type.String()),
      created_at: Timestamp,
    }),
  ),
  next_cursor: Nullable(Type.String()),
});
