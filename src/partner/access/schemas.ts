/** The request bodies of site locks and visitor sessions: routes.ts validates with them, service.ts takes their types. */
import { Type } from "@sinclair/typebox";
import { Body, Nullable } from "../../http/schemas.js";
import { OpaqueRef } from "../schemas.js";

export const Slug = Type.String({ minLength: 1, maxLength: 63, pattern: "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$" });
const DepartmentCode = Type.String({ minLength: 1, maxLength: 100 });
export const Mode = Type.Union([
  Type.Literal("none"),
  Type.Literal("tenant"),
  Type.Literal("department"),
  Type.Literal("invited"),
]);

export const AccessBody = Body({
  mode: Mode,
  tenant_ref: Type.Optional(OpaqueRef),
  department_code: Type.Optional(DepartmentCode),
  invited_refs: Type.Optional(Type.Array(OpaqueRef, { maxItems: 1000 })),
});

export const VisitorBody = Body({
  subject_ref: OpaqueRef,
  tenant_ref: Type.Optional(Nullable(OpaqueRef)),
  department_code: Type.Optional(Nullable(DepartmentCode)),
  site: Type.Optional(Slug),
  return_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
});
