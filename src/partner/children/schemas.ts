import { Type } from "@sinclair/typebox";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import { ApiKey } from "../../auth/api-keys.js";
import { OpaqueRef } from "../schemas.js";
import { MAX_TOKEN_DAYS } from "./scopes.js";
import type { ChildRow } from "./repo.js";

export { ApiKey as ChildToken, keyView as childTokenView } from "../../auth/api-keys.js";

const DepartmentCode = Type.String({ minLength: 1, maxLength: 100 });
const CapKrw = Type.Integer({ minimum: 1, maximum: 1_000_000_000_000, description: "monthly cap in KRW" });

export const TokenRequest = Body({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  scopes: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
    minItems: 1,
    maxItems: 50,
    description: "child resource scopes (e.g. pods:*, static:write), within the partner's child_scopes",
  }),
  expires_in_days: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_TOKEN_DAYS, default: 30, description: "days until it expires" }),
  ),
});

export const ChildCreate = Body({
  external_ref: OpaqueRef,
  department_code: Type.Optional(Nullable(DepartmentCode)),
  tenant_ref: Type.Optional(Nullable(OpaqueRef)),
  monthly_cap_krw: Type.Optional(Nullable(CapKrw)),
  token: Type.Optional(TokenRequest),
});

export const ChildPatchFields = {
  department_code: Type.Optional(Nullable(DepartmentCode)),
  tenant_ref: Type.Optional(Nullable(OpaqueRef)),
  monthly_cap_krw: Type.Optional(Nullable(CapKrw)),
};
export const ChildPatch = Body(ChildPatchFields);
/** PATCH /v1/partner/users (the spec's path): the child's id in the body */
export const ChildPatchById = Body({ id: Type.String({ format: "uuid" }), ...ChildPatchFields });

export const Child = Type.Object({
  id: Type.String(),
  external_ref: Type.String(),
  department_code: Nullable(Type.String()),
  tenant_ref: Nullable(Type.String()),
  monthly_cap_krw: Nullable(Type.Integer()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const childView = (c: ChildRow) => ({
  id: c.id,
  external_ref: c.external_ref,
  department_code: c.department_code,
  tenant_ref: c.tenant_ref,
  monthly_cap_krw: c.monthly_cap_krw,
  created_at: c.created_at.toISOString(),
  updated_at: c.updated_at.toISOString(),
});

export const IssuedToken = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: "the token (opk_...), shown only now" }),
});

export const ChildAnswer = Type.Object({
  ...Child.properties,
  token: Nullable(IssuedToken),
});

export const ChildParams = Type.Object({ id: Type.String({ format: "uuid" }) });
export const ChildTokenParams = Type.Object({
  id: Type.String({ format: "uuid" }),
  key_id: Type.String({ format: "uuid", description: "the token's id" }),
});

export const CreditBody = Body({
  amount_krw: Type.Integer({ minimum: 1, maximum: 100_000_000, description: "KRW moved from the partner's wallet" }),
});

export const CreditAnswer = Type.Object({
  transaction_id: Type.String(),
  amount_krw: Type.Integer(),
  replayed: Type.Boolean({ description: "true when this Idempotency-Key already moved the money" }),
  child_balance_krw: Type.Integer(),
  partner_balance_krw: Type.Integer(),
});
